import { describe, expect, it } from 'vitest';
import { InvalidRangeError, joinPath, NotFoundError, type FileIO, type FileStatus } from '../src/index.js';

const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function collect(it: AsyncIterable<FileStatus>): Promise<FileStatus[]> {
  const out: FileStatus[] = [];
  for await (const s of it) out.push(s);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** Behaviour every FileIO must show; `root()` returns a fresh, empty directory location per test. */
export function describeFileIOBehaviour(name: string, makeIO: () => FileIO, root: () => string): void {
  describe(`${name}: FileIO behaviour`, () => {
    it('writes, reads, overwrites and stats', async () => {
      const io = makeIO();
      const p = joinPath(root(), 'a', 'b.txt');
      await io.write(p, 'hello');
      expect(text(await io.read(p))).toBe('hello');
      await io.write(p, new Uint8Array([1, 2, 3]));
      expect([...(await io.read(p))]).toEqual([1, 2, 3]);
      const st = await io.stat(p);
      expect(st.path).toBe(p);
      expect(st.size).toBe(3);
      expect(st.lastModified).toBeInstanceOf(Date);
      expect(Math.abs(st.lastModified.getTime() - Date.now())).toBeLessThan(60_000);
      expect(await io.exists(p)).toBe(true);
    });

    it('keeps stored bytes apart from the buffers written and read (also Node Buffers, whose slice is a view)', async () => {
      const io = makeIO();
      const p = joinPath(root(), 'owned.bin');
      const written = Buffer.from([1, 2, 3, 4, 5]);
      await io.write(p, written);
      written.fill(9);
      const read = await io.read(p);
      expect([...read]).toEqual([1, 2, 3, 4, 5]);
      read.fill(7);
      const range = await io.readRange(p, 1, 3);
      expect([...range]).toEqual([2, 3, 4]);
      // A reader may transfer what it read to a worker thread (detaching it): the store must not care.
      structuredClone(range.buffer, { transfer: [range.buffer as ArrayBuffer] });
      expect([...(await io.read(p))]).toEqual([1, 2, 3, 4, 5]);
      expect([...(await io.readRange(p, 1, 3))]).toEqual([2, 3, 4]);
    });

    it('reports missing objects with NotFoundError naming the path', async () => {
      const io = makeIO();
      const p = joinPath(root(), 'missing');
      await expect(io.read(p)).rejects.toBeInstanceOf(NotFoundError);
      await expect(io.read(p)).rejects.toThrow(p);
      await expect(io.stat(p)).rejects.toBeInstanceOf(NotFoundError);
      await expect(io.readRange(p, 0, 1)).rejects.toBeInstanceOf(NotFoundError);
      expect(await io.exists(p)).toBe(false);
      await io.delete(p); // not an error
    });

    it('reads ranges, cutting at the end and rejecting ranges past it', async () => {
      const io = makeIO();
      const p = joinPath(root(), 'range.bin');
      await io.write(p, new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
      expect([...(await io.readRange(p, 2, 4))]).toEqual([2, 3, 4, 5]);
      expect([...(await io.readRange(p, 0, 1))]).toEqual([0]);
      expect([...(await io.readRange(p, 8, 100))]).toEqual([8, 9]);
      expect([...(await io.readRange(p, 9, 1))]).toEqual([9]);
      expect((await io.readRange(p, 3, 0)).length).toBe(0);
      await expect(io.readRange(p, 10, 1)).rejects.toBeInstanceOf(InvalidRangeError);
      await expect(io.readRange(p, 11, 5)).rejects.toBeInstanceOf(InvalidRangeError);
      await expect(io.readRange(p, -1, 2)).rejects.toBeInstanceOf(InvalidRangeError);
    });

    it('createIfAbsent creates once and keeps the first bytes', async () => {
      const io = makeIO();
      const p = joinPath(root(), 'snapshot', 'snapshot-1');
      expect(await io.createIfAbsent(p, 'first')).toBe('created');
      expect(await io.createIfAbsent(p, 'second')).toBe('already-exists');
      expect(text(await io.read(p))).toBe('first');
    });

    it('createIfAbsent has exactly one winner among concurrent callers', async () => {
      const io = makeIO();
      const dir = root();
      for (let round = 0; round < 20; round++) {
        const p = joinPath(dir, `race-${round}`);
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => io.createIfAbsent(p, `writer-${i}`)));
        const winners = results.flatMap((r, i) => (r === 'created' ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(text(await io.read(p))).toBe(`writer-${winners[0]}`);
      }
    });

    it('lists files recursively or one level, with paths in the form of the directory', async () => {
      const io = makeIO();
      const dir = root();
      await io.write(joinPath(dir, 't', 'snapshot', 'snapshot-1'), 'x');
      await io.write(joinPath(dir, 't', 'snapshot', 'LATEST'), 'yy');
      await io.write(joinPath(dir, 't', 'bucket-0', 'data-1.parquet'), 'zzz');
      await io.write(joinPath(dir, 't', 'schema-0'), '');
      await io.write(joinPath(dir, 'tother', 'x'), 'not under t');
      const t = joinPath(dir, 't');
      const all = await collect(io.list(t));
      expect(all.map((s) => s.path)).toEqual(
        [
          joinPath(t, 'bucket-0', 'data-1.parquet'),
          joinPath(t, 'schema-0'),
          joinPath(t, 'snapshot', 'LATEST'),
          joinPath(t, 'snapshot', 'snapshot-1'),
        ].sort(),
      );
      expect(all.find((s) => s.path.endsWith('LATEST'))?.size).toBe(2);
      const top = await collect(io.list(t, { recursive: false }));
      expect(top.map((s) => s.path)).toEqual([joinPath(t, 'schema-0')]);
      expect(await collect(io.list(`${t}/`, { recursive: false }))).toHaveLength(1);
      expect(await collect(io.list(joinPath(dir, 'nope')))).toEqual([]);
    });

    it('deletes one and many objects, streaming the input', async () => {
      const io = makeIO();
      const dir = root();
      const paths = Array.from({ length: 30 }, (_, i) => joinPath(dir, 'd', `f-${i}`));
      for (const p of paths) await io.write(p, 'x');
      await io.delete(paths[0]!);
      expect(await io.exists(paths[0]!)).toBe(false);
      async function* stream() {
        for (const p of paths.slice(1, 20)) yield p;
        yield joinPath(dir, 'd', 'never-existed');
      }
      expect(await io.deleteMany(stream())).toBe(20);
      expect(await io.deleteMany(paths.slice(20))).toBe(10);
      expect(await collect(io.list(joinPath(dir, 'd')))).toEqual([]);
    });
  });
}
