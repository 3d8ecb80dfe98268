import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type CreateResult } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import {
  CorruptInflightRecordError,
  FileSystemCatalog,
  InflightRecordError,
  TableWrite,
  inflightDir,
  inflightRecordPath,
  listInflightRecords,
  parseInflightRecord,
  recordInflightFiles,
  recordInflightPrefixes,
  type InflightRecordFile,
} from '../src/index.js';
import { createTestTable, dataFile, partitionBytes } from './commit-helpers.js';

/** Memory store that lets a test look at the table before every write / snapshot create. */
class HookedIO extends MemoryFileIO {
  beforeWrite: (path: string) => Promise<void> = async () => {};
  createResult: (() => Promise<CreateResult>) | null = null;

  override async write(path: string, data: Uint8Array | string): Promise<void> {
    await this.beforeWrite(path);
    return super.write(path, data);
  }

  override async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
    if (this.createResult !== null && path.includes('/snapshot/snapshot-')) return this.createResult();
    return super.createIfAbsent(path, data);
  }
}

const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

async function records(io: MemoryFileIO, location: string): Promise<InflightRecordFile[]> {
  const out: InflightRecordFile[] = [];
  for await (const r of listInflightRecords(io, location)) out.push(r);
  return out;
}

/** Does some record cover `path` (listed, or its name starts with a recorded prefix)? */
function covered(recs: readonly InflightRecordFile[], location: string, path: string): boolean {
  const rel = path.slice(location.length + 1);
  return recs.some((r) => r.record.files.includes(rel) || r.record.prefixes.some((p) => baseName(path).startsWith(p)));
}

let n = 0;
async function writerTable(io: MemoryFileIO, options: Record<string, string> = {}): Promise<{ location: string; schema: TableSchema }> {
  const catalog = new FileSystemCatalog(`memory://inflight-test-${process.pid}-${++n}/wh`, { fileIO: io });
  const schema = await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'p', type: 'STRING' },
    ],
    partitionKeys: ['p'],
    options: { bucket: '2', 'bucket-key': 'id', ...options },
  });
  return { location: catalog.tableLocation('db.t'), schema };
}

const rows = (count: number, start = 0) => Array.from({ length: count }, (_, i) => ({ id: start + i, p: `p${i % 3}` }));

describe('in-flight record format', () => {
  it('reads records without prefixes (older writers) and with prefixes', () => {
    expect(parseInflightRecord('{"files":["bucket-0/data-x.parquet"],"createdAt":5}', 'r').prefixes).toEqual([]);
    const r = parseInflightRecord('{"files":[],"prefixes":["data-u-"],"createdAt":5}', 'r');
    expect(r.prefixes).toEqual(['data-u-']);
    expect(r.files).toEqual([]);
    expect(() => parseInflightRecord('{"files":[],"prefixes":"data-u-","createdAt":5}', 'r')).toThrow(CorruptInflightRecordError);
    expect(() => parseInflightRecord('{"files":[],"prefixes":[1],"createdAt":5}', 'r')).toThrow(CorruptInflightRecordError);
  });

  it('writes prefixes next to a files member that older readers still parse', async () => {
    const io = new MemoryFileIO();
    await recordInflightPrefixes(io, 'memory://x/t', 'write-1', ['data-abc-'], { now: () => 42 });
    const raw = JSON.parse(new TextDecoder().decode(await io.read(inflightRecordPath('memory://x/t', 'write-1')))) as Record<
      string,
      unknown
    >;
    expect(raw).toEqual({ files: [], prefixes: ['data-abc-'], createdAt: 42 });
    await recordInflightFiles(io, 'memory://x/t', 'sink-1', ['bucket-0/data-y.parquet'], { now: () => 7 });
    const sink = JSON.parse(new TextDecoder().decode(await io.read(inflightRecordPath('memory://x/t', 'sink-1')))) as Record<
      string,
      unknown
    >;
    expect(sink).toEqual({ files: ['bucket-0/data-y.parquet'], createdAt: 7 });
  });

  it('rejects prefixes that are not file-name prefixes', async () => {
    const io = new MemoryFileIO();
    for (const bad of ['', 'bucket-0/data-', '.hidden', 'a\\b']) {
      await expect(recordInflightPrefixes(io, 'memory://x/t', 'w', [bad])).rejects.toBeInstanceOf(InflightRecordError);
    }
    await expect(recordInflightPrefixes(io, 'memory://x/t', 'w', [])).rejects.toBeInstanceOf(InflightRecordError);
  });
});

describe('TableWrite in-flight record', () => {
  it('records its prefix before the first data file, covers every file, and clears it on close', async () => {
    const io = new HookedIO();
    const { location, schema } = await writerTable(io, { 'target-file-size': '1 kb' });
    const uncovered: string[] = [];
    let dataWrites = 0;
    io.beforeWrite = async (path) => {
      if (!path.endsWith('.parquet')) return;
      dataWrites++;
      if (!covered(await records(io, location), location, path)) uncovered.push(path);
    };
    const w = new TableWrite(io, location, schema);
    await w.write(rows(3000));
    const messages = await w.prepareCommit();
    const files = messages.flatMap((m) => m.newFiles.map((f) => f.fileName));
    // Several partitions and buckets, rolled files: all named after the one writer prefix.
    expect(messages.length).toBeGreaterThan(3);
    expect(files.length).toBeGreaterThan(messages.length);
    expect(dataWrites).toBe(files.length);
    expect(uncovered).toEqual([]);
    for (const f of files) expect(f.startsWith(w.filePrefix)).toBe(true);
    expect(new Set(files).size).toBe(files.length);
    const recs = await records(io, location);
    expect(recs.map((r) => r.id)).toEqual([w.inflightRecordId]);
    expect(recs[0]!.record.prefixes).toEqual([w.filePrefix]);

    await w.close();
    expect(await records(io, location)).toEqual([]);
  });

  it('abort deletes the files and clears the record when nothing was handed out', async () => {
    const io = new MemoryFileIO();
    const { location, schema } = await writerTable(io, { 'target-file-size': '1 kb' });
    const w = new TableWrite(io, location, schema);
    await w.write(rows(3000));
    expect(await records(io, location)).toHaveLength(1);
    await w.abort();
    expect(await records(io, location)).toEqual([]);
    const left: string[] = [];
    for await (const st of io.list(location)) if (st.path.endsWith('.parquet')) left.push(st.path);
    expect(left).toEqual([]);
  });

  it('abort keeps the record while files handed out by prepareCommit may still be committed', async () => {
    const io = new MemoryFileIO();
    const { location, schema } = await writerTable(io);
    const w = new TableWrite(io, location, schema);
    await w.write(rows(10));
    const handed = await w.prepareCommit();
    expect(handed.length).toBeGreaterThan(0);
    await w.write(rows(10, 100));
    await w.abort();
    expect((await records(io, location)).map((r) => r.id)).toEqual([w.inflightRecordId]);
    await w.close();
    expect(await records(io, location)).toEqual([]);
  });

  it('writes no record with recordInflight: false or without data files', async () => {
    const io = new MemoryFileIO();
    const { location, schema } = await writerTable(io);
    const raw = new TableWrite(io, location, schema, { recordInflight: false });
    await raw.write(rows(10));
    expect((await raw.prepareCommit()).length).toBeGreaterThan(0);
    const idle = new TableWrite(io, location, schema);
    expect(await idle.prepareCommit()).toEqual([]);
    expect(await io.exists(inflightDir(location))).toBe(false);
    expect(await records(io, location)).toEqual([]);
    await raw.close();
    await idle.close();
  });
});

describe('FileStoreCommit in-flight record', () => {
  const messages = () => [{ partition: partitionBytes('a'), bucket: 0, totalBuckets: -1, newFiles: [dataFile(3), dataFile(4)] }];

  it('covers every manifest before it is written and is cleared once the snapshot exists', async () => {
    const io = new HookedIO();
    const t = await createTestTable({ io });
    const root = t.paths.root;
    const manifests: string[] = [];
    const uncovered: string[] = [];
    io.beforeWrite = async (path) => {
      if (!path.includes('/manifest/')) return;
      manifests.push(path);
      if (!covered(await records(io, root), root, path)) uncovered.push(path);
    };
    for (let i = 1; i <= 3; i++) {
      const r = await t.commit.commit({ identifier: BigInt(i), messages: messages() }, { commitUser: 'u' });
      expect(r.status).toBe('committed');
      expect(await records(io, root)).toEqual([]);
    }
    expect(manifests.length).toBeGreaterThanOrEqual(9); // a manifest and two lists per commit
    expect(uncovered).toEqual([]);
  });

  it('is cleared after a failed commit deleted its manifests', async () => {
    const io = new HookedIO();
    const t = await createTestTable({
      io,
      commit: { commitOptions: { maxRetries: 1, minRetryWaitMs: 1, maxRetryWaitMs: 2 }, logger: { warn: () => {} } },
    });
    io.createResult = async () => 'already-exists'; // every attempt loses the race
    await expect(t.commit.commit({ identifier: 1n, messages: messages() }, { commitUser: 'u' })).rejects.toThrow(/gave up/);
    expect(await records(io, t.paths.root)).toEqual([]);
    const left: string[] = [];
    for await (const st of io.list(t.paths.root)) if (st.path.includes('/manifest/')) left.push(st.path);
    expect(left).toEqual([]);
  });

  it('keeps the record with its manifests when the snapshot create had an unknown outcome', async () => {
    const io = new HookedIO();
    const t = await createTestTable({ io, commit: { commitOptions: { maxRetries: 0 }, logger: { warn: () => {} } } });
    io.createResult = async () => {
      throw new Error('connection reset');
    };
    await expect(t.commit.commit({ identifier: 1n, messages: messages() }, { commitUser: 'u' })).rejects.toThrow(/connection reset/);
    const recs = await records(io, t.paths.root);
    expect(recs).toHaveLength(1);
    const left: string[] = [];
    for await (const st of io.list(t.paths.root)) if (st.path.includes('/manifest/')) left.push(st.path);
    expect(left.length).toBeGreaterThan(0);
    for (const p of left) expect(covered(recs, t.paths.root, p), p).toBe(true);
  });

  it('a lost base list written over by an attempt with an unknown outcome that landed stays: the snapshot references it', async () => {
    const io = new HookedIO();
    const t = await createTestTable({ io, commit: { logger: { warn: () => {} } } });
    const listWrites: string[] = [];
    io.beforeWrite = async (path) => {
      if (path.includes('/manifest-list-')) listWrites.push(baseName(path));
    };
    let creates = 0;
    io.createResult = async () => {
      creates++;
      if (creates === 1) return 'already-exists'; // a lost race (nothing created)
      // Lands, but the answer is lost: the next attempt must find it as its own.
      await MemoryFileIO.prototype.createIfAbsent.call(io, t.paths.snapshotPath(1), (await lastCreate)!);
      throw new Error('connection reset');
    };
    let lastCreate: Promise<string | null> = Promise.resolve(null);
    const create = io.createIfAbsent.bind(io);
    io.createIfAbsent = async (path, data) => {
      if (path.includes('/snapshot/snapshot-'))
        lastCreate = Promise.resolve(typeof data === 'string' ? data : new TextDecoder().decode(data));
      return create(path, data);
    };
    const r = await t.commit.commit({ identifier: 1n, messages: messages() }, { commitUser: 'u' });
    expect(r).toMatchObject({ status: 'committed', snapshotId: 1 });
    expect(creates).toBe(2);
    const s = await t.snapshots.snapshot(1);
    // Attempt 1's base list, then the delta list and base list of attempt 1 and 2: the second base
    // list was written under the name of the first (lost) one, which the snapshot now references.
    expect(listWrites.filter((x) => x === s.baseManifestList)).toHaveLength(2);
    const left: string[] = [];
    for await (const st of io.list(t.paths.root)) if (st.path.includes('/manifest/')) left.push(baseName(st.path));
    expect(left).toContain(s.baseManifestList);
    expect(left).toContain(s.deltaManifestList);
    io.createResult = null;
    expect((await t.commit.commit({ identifier: 2n, messages: messages() }, { commitUser: 'u' })).status).toBe('committed');
    expect(await t.snapshots.snapshot(2)).toMatchObject({ baseManifestList: expect.any(String) });
    expect(await records(io, t.paths.root)).toEqual([]);
  });

  it('writes no record with recordInflight: false', async () => {
    const io = new HookedIO();
    const t = await createTestTable({ io, commit: { recordInflight: false } });
    io.beforeWrite = async (path) => {
      if (path.includes('/inflight/')) throw new Error(`unexpected record ${path}`);
    };
    expect((await t.commit.commit({ identifier: 1n, messages: messages() }, { commitUser: 'u' })).status).toBe('committed');
  });
});
