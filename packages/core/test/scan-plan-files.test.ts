/**
 * PlanFiles (a plan's live files as columns plus the raw bytes of each `_FILE` record) against a
 * plain map keyed by `fileEntryIdentity`: random ADD/DELETE sequences over a few groups, walked
 * from real manifest bytes (and some folded as decoded objects, as ORC manifests are), where file
 * names repeat across levels and groups and some files carry extra files, embedded indexes or
 * external paths; with hashes that make every name collide. The live files come out exactly, each
 * decoded back to the file that was added, in split order.
 */
import { describe, expect, it } from 'vitest';
import {
  ManifestEntryWalker,
  fileEntryIdentity,
  newDataFileMeta,
  readAvroBlocks,
  writeManifestFile,
  type DataFileMeta,
  type ManifestEntry,
} from '@tidemark/format';
import { PlanFiles, fullFileIdentity, identityHash } from '../src/scan/plan-files.js';
import { BucketFile } from '../src/scan/planned-split.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

const PARTITIONS: Uint8Array[] = [new Uint8Array([0, 0, 0, 1, 0, 0, 0, 0]), new Uint8Array([0, 0, 0, 1, 0, 0, 0, 2])];
const hex = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString('hex'));

/** A file's fields that the plan must give back (bytes as hex). */
const fileFields = (f: DataFileMeta) => ({
  fileName: f.fileName,
  level: f.level,
  rowCount: f.rowCount,
  minSequenceNumber: f.minSequenceNumber,
  extraFiles: [...f.extraFiles],
  embeddedIndex: hex(f.embeddedIndex),
  externalPath: f.externalPath,
  valueStats: [hex(f.valueStats.minValues), hex(f.valueStats.maxValues), f.valueStats.nullCounts],
});

type SplitOrder = Pick<DataFileMeta, 'level' | 'minSequenceNumber' | 'fileName'>;

/** Order of files in a split: level, then min sequence number, then name (JS string order). */
function compareFiles(a: SplitOrder, b: SplitOrder): number {
  if (a.level !== b.level) return a.level - b.level;
  if (a.minSequenceNumber !== b.minSequenceNumber) return a.minSequenceNumber < b.minSequenceNumber ? -1 : 1;
  return a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0;
}

function randomOps(seed: number, n: number): ManifestEntry[] {
  const rng = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  return Array.from({ length: n }, () => {
    const odd = rng() < 0.2;
    const group = Math.floor(rng() * 4);
    return {
      kind: rng() < 0.55 ? 'ADD' : 'DELETE',
      partition: PARTITIONS[group >> 1]!,
      bucket: group & 1,
      totalBuckets: pick([2, 4]),
      file: newDataFileMeta({
        // Names beyond ASCII order differently as UTF-16 and as bytes.
        fileName: `f-${pick(['', 'ü', 'z', '\u{1F600}'])}${Math.floor(rng() * 12)}.parquet`,
        fileSize: 1,
        rowCount: Math.floor(rng() * 100),
        schemaId: 0,
        level: pick([0, 1]),
        minSequenceNumber: pick([0n, 1n, 2n, 2n ** 60n, 2n ** 60n + 1n]),
        valueStats: { minValues: new Uint8Array([Math.floor(rng() * 256)]), maxValues: new Uint8Array([9]), nullCounts: [0] },
        ...(odd ? pick([{ extraFiles: ['x.index'] }, { embeddedIndex: new Uint8Array([1]) }, { externalPath: 's3://b/f' }]) : {}),
      }),
    } satisfies ManifestEntry;
  });
}

describe('PlanFiles', () => {
  const hashes: [string, typeof identityHash | undefined][] = [
    ['the real identity hash', undefined],
    ['a hash where every name collides', () => 7],
    ['a two-valued hash', (_bytes, start, end) => (end - start) % 2],
  ];
  it.each(hashes)('adds, finds and deletes exactly as a map keyed by the full identity, with %s', async (_label, hash) => {
    const ops = randomOps(9, 4000);
    const bytes = await writeManifestFile(ops, { blockSize: 4096 });
    const files = new PlanFiles(0, hash);
    const model = new Map<string, { group: number; file: DataFileMeta; totalBuckets: number }>();
    const groupOf = (e: ManifestEntry): number => (PARTITIONS.indexOf(e.partition) << 1) | e.bucket;
    let i = 0;
    let collisions = 0;
    for await (const block of readAvroBlocks(bytes, { path: 'm' })) {
      const walker = ManifestEntryWalker.forHeader(block.header)!;
      walker.walk(block.data, block.count, block.index, 'm', (w) => {
        const entry = ops[i]!;
        const object = i % 5 === 0;
        i++;
        const key = fileEntryIdentity(entry);
        const group = groupOf(entry);
        const file = w.fileAt(block.data, w.fileStart);
        const identity = w.plainIdentity ? null : fullFileIdentity(file);
        if (entry.kind === 'ADD') {
          const added = object ? files.addObject(entry.file, group, entry.totalBuckets) : files.addWalked(w, block.data, group, identity);
          expect(added).toBe(!model.has(key));
          if (added) model.set(key, { group, file: entry.file, totalBuckets: entry.totalBuckets });
        } else {
          const deleted = object ? files.deleteObject(entry.file, group) : files.deleteWalked(w, block.data, group, identity);
          expect(deleted).toBe(model.delete(key));
        }
        expect(files.size).toBe(model.size);
        if ([...model.values()].filter((m) => m.file.fileName === entry.file.fileName).length > 1) collisions++;
        return true;
      });
    }
    expect(i).toBe(ops.length);
    expect(collisions).toBeGreaterThan(100);
    // The block bytes are gone: what the plan gives back is its own copy.
    const { rows, starts } = files.finish(4);
    expect(rows.length).toBe(model.size);
    for (let g = 0; g < 4; g++) {
      const want = [...model.values()].filter((m) => m.group === g);
      const groupRows = rows.subarray(starts[g]!, starts[g + 1]!);
      // Before ordering, the rows are in ADD order: the first gives the split's total buckets.
      if (want.length > 0) expect(files.totalBuckets(groupRows[0]!)).toBe(want[0]!.totalBuckets);
      const ordered = files.ordered(groupRows);
      const got = Array.from(ordered, (r) => files.meta(r));
      expect(got.map(fileFields).sort((a, b) => compareFiles(a, b))).toEqual(
        want.map((m) => fileFields(m.file)).sort((a, b) => compareFiles(a, b)),
      );
      for (let k = 1; k < got.length; k++) expect(compareFiles(got[k - 1]!, got[k]!)).toBeLessThanOrEqual(0);
      expect(Array.from(ordered, (r) => files.rowsOf(r))).toEqual(got.map((f) => f.rowCount));
      expect(Array.from(ordered, (r) => files.level(r))).toEqual(got.map((f) => f.level));
    }
  });

  it('keeps exactly the live files through growth, many deletions (rebuilds of its hash table) and the arena compaction', async () => {
    const rng = seededRandom(21);
    const f = (i: number, level = 0): DataFileMeta =>
      newDataFileMeta({ fileName: `data-${i}.parquet`, fileSize: 1, rowCount: i, schemaId: 0, level, minSequenceNumber: BigInt(i) });
    const entry = (kind: 'ADD' | 'DELETE', file: DataFileMeta): ManifestEntry => ({
      kind,
      partition: PARTITIONS[0]!,
      bucket: 0,
      totalBuckets: 1,
      file,
    });
    const ops: ManifestEntry[] = [];
    const live = new Set<number>();
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3000; i++) {
        if (live.has(i) || rng() >= 0.7) continue;
        live.add(i);
        ops.push(entry('ADD', f(i)));
      }
      for (const i of [...live]) if (rng() < 0.6 && live.delete(i)) ops.push(entry('DELETE', f(i)));
      // Same name at another level is another file.
      ops.push(entry('DELETE', f(0, 1)));
    }
    const files = new PlanFiles(100);
    const results: boolean[] = [];
    for await (const block of readAvroBlocks(await writeManifestFile(ops, { codec: 'null' }), { path: 'm' })) {
      ManifestEntryWalker.forHeader(block.header)!.walk(block.data, block.count, block.index, 'm', (w) => {
        results.push(w.kind === 0 ? files.addWalked(w, block.data, 0, null) : files.deleteWalked(w, block.data, 0, null));
        return true;
      });
    }
    // Every op succeeds except the deletes of the level-1 file, which was never added.
    expect(results.filter((r) => !r)).toHaveLength(4);
    expect(files.size).toBe(live.size);
    const { rows } = files.finish(1);
    expect(Array.from(files.ordered(rows), (r) => files.meta(r).fileName)).toEqual(
      [...live].sort((a, b) => a - b).map((i) => `data-${i}.parquet`),
    );
  });
});

describe('PlanFiles memory', () => {
  it('keeps the blocks of mostly live files, and copies out the live records of blocks mostly filtered out', async () => {
    const rng = seededRandom(33);
    const ops = randomOps(13, 3000).map((e) => ({
      ...e,
      kind: 'ADD' as const,
      file: { ...e.file, fileName: `${e.file.fileName}-${rng()}` },
    }));
    const bytes = await writeManifestFile(ops, { blockSize: 8192 });
    for (const keepEvery of [1, 4]) {
      const files = new PlanFiles();
      const blocks: Buffer[] = [];
      const added: DataFileMeta[] = [];
      let i = 0;
      for await (const block of readAvroBlocks(bytes, { path: 'm' })) {
        blocks.push(block.data);
        ManifestEntryWalker.forHeader(block.header)!.walk(block.data, block.count, block.index, 'm', (w) => {
          // Every `keepEvery`-th entry passes (as a partition filter would let it).
          if (i++ % keepEvery === 0) {
            const file = w.fileAt(block.data, w.fileStart);
            expect(files.addWalked(w, block.data, 0, w.plainIdentity ? null : fullFileIdentity(file))).toBe(true);
            added.push(ops[i - 1]!.file);
          }
          return true;
        });
      }
      const { rows } = files.finish(1);
      const blockBytes = blocks.reduce((n, b) => n + b.length, 0);
      if (keepEvery === 1) {
        // Every block is kept as it is (no copy): the plan holds the blocks.
        expect(files.bytesHeld).toBe(blocks.reduce((n, b) => n + b.buffer.byteLength, 0));
      } else {
        // A quarter of each block is live: those records are copied into one arena chunk (1 MiB),
        // the blocks let go.
        expect(blockBytes).toBeGreaterThan(100_000);
        expect(files.bytesHeld).toBe(1 << 20);
        for (const b of blocks) b.fill(0xee);
      }
      const got = Array.from(rows, (r) => fileFields(files.meta(r)));
      expect(got).toEqual(added.map(fileFields));
    }
  });
});

describe('BucketFile', () => {
  it('derives the location from the bucket directory, or takes the external path', () => {
    const file = newDataFileMeta({ fileName: 'data-1.parquet', fileSize: 1, rowCount: 1, schemaId: 0 });
    expect(new BucketFile(file, 's3://bkt/wh/db.db/t/p=7/bucket-3').path).toBe('s3://bkt/wh/db.db/t/p=7/bucket-3/data-1.parquet');
    const ext = { ...file, externalPath: 's3://other/data-1.parquet' };
    expect(new BucketFile(ext, 's3://bkt/wh/db.db/t/p=7/bucket-3').path).toBe('s3://other/data-1.parquet');
  });

  it('has the identity hash depend on the group, the level and every name byte', () => {
    const name = Buffer.from('data-abc.parquet');
    const base = identityHash(name, 0, name.length, 0, 0);
    expect(identityHash(name, 0, name.length, 1, 0)).not.toBe(base);
    expect(identityHash(name, 0, name.length, 0, 1)).not.toBe(base);
    expect(identityHash(Buffer.from('data-abd.parquet'), 0, name.length, 0, 0)).not.toBe(base);
    expect(identityHash(Buffer.concat([Buffer.from('xx'), name]), 2, name.length + 2, 0, 0)).toBe(base);
  });
});
