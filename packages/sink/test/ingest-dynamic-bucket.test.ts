import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { buildInitialSchema, liveEntries, openTable } from '@tidemark/core';
import { readIndexManifest, serializeSchema } from '@tidemark/format';
import {
  FileIOCheckpointStore,
  runIngest,
  type CrashHook,
  type ReplayableSource,
  type SourceOffset,
  type SourceRecord,
} from '../src/index.js';
import { SourceRecordError } from '../src/errors.js';
import { SimulatedCrash, bucketOfKeys, createDynamicBucketTable, expectIndexedWhereStored, indexedBuckets } from './helpers.js';

/** Upserts of keys 0..keys-1 in rounds: record i sets key i % keys to `r<round>`. */
class UpsertSource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  readonly id = 'upserts:test';
  constructor(
    readonly n: number,
    readonly keys: number,
  ) {}
  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) {
      yield { value: { k: i % this.keys, v: `r${Math.floor(i / this.keys)}` }, offset: i + 1 };
    }
  }
}

describe('runIngest into a dynamic-bucket primary-key table', () => {
  it('several writers over several checkpoints: latest values, one bucket per key, an index matching the data', async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn-${randomBytes(6).toString('hex')}/db.db/t`;
    await createDynamicBucketTable(io, location);
    const keys = 25;
    const s = await runIngest({
      table: location,
      fileIO: io,
      source: new UpsertSource(keys * 4, keys),
      stateStore: new FileIOCheckpointStore(io, `${location}-state`),
      checkpointEvery: 30,
      parallelism: 3,
    });
    expect(s.status).toBe('source-done');

    const table = await openTable(location, { fileIO: io });
    const read = (await table.newRead().toArrowTable()).toArray().map((r: { k: number; v: string }) => [r.k, r.v] as const);
    expect(read.length).toBe(keys);
    expect(new Map(read)).toEqual(new Map(Array.from({ length: keys }, (_, k) => [k, 'r3'] as const)));

    const bucketOf = await bucketOfKeys(io, table);
    const indexed = await indexedBuckets(io, table, { unique: true });
    expect(indexed.size).toBe(keys);
    expectIndexedWhereStored(bucketOf, indexed);
    // The writers share one assigner: buckets fill to target-row-num (4) across them.
    expect(new Set(bucketOf.values()).size).toBe(Math.ceil(keys / 4));
    // Records reach the writers by assigned bucket: every live file of a bucket (flushed or
    // compacted) carries the file-name uuid of one table writer, and all three writers wrote.
    const writersOf = new Map<number, Set<string>>();
    for (const e of (await liveEntries(io, table.paths, (await table.snapshotManager.latest())!)).values()) {
      const writer = /^data-(.{36})-/.exec(e.file.fileName)![1]!;
      writersOf.set(e.bucket, new Set([...(writersOf.get(e.bucket) ?? []), writer]));
    }
    for (const [bucket, writers] of writersOf) expect(writers.size, `writers of bucket ${bucket}`).toBe(1);
    expect(new Set([...writersOf.values()].flatMap((w) => [...w])).size).toBe(3);
  });

  it('one writer compacts its buckets across checkpoints', async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn1-${randomBytes(6).toString('hex')}/db.db/t`;
    await createDynamicBucketTable(io, location);
    const keys = 12;
    const s = await runIngest({
      table: location,
      fileIO: io,
      source: new UpsertSource(keys * 8, keys),
      stateStore: new FileIOCheckpointStore(io, `${location}-state`),
      checkpointEvery: 12,
    });
    expect(s).toMatchObject({ status: 'source-done', checkpoints: 8 });
    const table = await openTable(location, { fileIO: io });
    const read = (await table.newRead().toArrowTable()).toArray().map((r: { k: number; v: string }) => [r.k, r.v] as const);
    expect(new Map(read)).toEqual(new Map(Array.from({ length: keys }, (_, k) => [k, 'r7'] as const)));
    const kinds: string[] = [];
    for await (const snap of table.snapshotManager.iterateForward()) kinds.push(snap.commitKind);
    // Eight checkpoints of three buckets each: the default trigger (5 sorted runs) compacts them.
    expect(kinds).toContain('COMPACT');
    expectIndexedWhereStored(await bucketOfKeys(io, table), await indexedBuckets(io, table, { unique: true }));
  });
});

/** Keys `from`..`to - 1`, each set to `value`; offset = index of the next record. */
class KeySource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  opened: SourceOffset[] = [];
  constructor(
    readonly id: string,
    readonly from: number,
    readonly to: number,
    readonly value: string,
  ) {}
  async *open(start: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    this.opened.push(start);
    for (let i = start === null ? 0 : (start as number); i < this.to - this.from; i++)
      yield { value: { k: this.from + i, v: this.value }, offset: i + 1 };
  }
}

describe('two pipelines inserting the same new keys into one dynamic-bucket table', () => {
  it('a stored checkpoint that lost the race for a new key is dropped and its records re-ingested on restart', async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn-race-${randomBytes(6).toString('hex')}/db.db/t`;
    await createDynamicBucketTable(io, location);
    const stateA = new FileIOCheckpointStore(io, `${location}-state-a`);
    // Pipeline A: its checkpoint (keys 0..5) is durable in its state, then the process dies before committing.
    const crash: CrashHook = {
      hit(p) {
        if (p === 'after-state-durable') throw new SimulatedCrash(p);
      },
    };
    const sourceA = new KeySource('keys:a', 0, 6, 'A');
    await expect(
      runIngest({ table: location, fileIO: io, source: sourceA, stateStore: stateA, checkpointEvery: 100, crash }),
    ).rejects.toThrow(SimulatedCrash);
    // Pipeline B places keys 3..8 (3..5 new to the table as well) first.
    const b = await runIngest({
      table: location,
      fileIO: io,
      source: new KeySource('keys:b', 3, 9, 'B'),
      stateStore: new FileIOCheckpointStore(io, `${location}-state-b`),
      checkpointEvery: 100,
    });
    expect(b.status).toBe('source-done');
    // A restarts: its stored checkpoint can never commit (keys 3..5 have their buckets now); the
    // pipeline drops it and reads its source again from the last committed position (the start).
    const warnings: string[] = [];
    const a = await runIngest({
      table: location,
      fileIO: io,
      source: sourceA,
      stateStore: stateA,
      checkpointEvery: 100,
      logger: { warn: (m) => warnings.push(m) },
    });
    expect(a.status).toBe('source-done');
    expect(a.recoveredCheckpoints).toBe(0);
    expect(sourceA.opened).toEqual([null, null]);
    expect(warnings.join('\n')).toMatch(
      /dropped the stored checkpoint\(s\) after none up to 1 .*\(4 file\(s\) deleted\): dynamic bucket conflict/,
    );

    const table = await openTable(location, { fileIO: io });
    const read = (await table.newRead().toArrowTable()).toArray().map((r: { k: number; v: string }) => [r.k, r.v] as const);
    expect(read.length, 'every key once').toBe(9);
    expect(new Map(read)).toEqual(new Map([0, 1, 2, 3, 4, 5, 6, 7, 8].map((k) => [k, k < 6 ? 'A' : 'B'] as const)));
    // The index names each key in the one bucket its data lives in.
    expectIndexedWhereStored(await bucketOfKeys(io, table), await indexedBuckets(io, table));
    // Running A again resumes from its new state: nothing left to do, nothing written twice.
    const again = await runIngest({ table: location, fileIO: io, source: sourceA, stateStore: stateA, checkpointEvery: 100 });
    expect(again.records).toBe(0);
    expect((await table.newRead().toArrowTable()).numRows).toBe(9);
  });
  it('a checkpoint that loses the race during a run is dropped and its records written again at once', async () => {
    /** Runs `before` once, just before the first state file under `dir` is created. */
    class RacingIO extends MemoryFileIO {
      before: { dir: string; run: () => Promise<void> } | null = null;
      override async createIfAbsent(path: string, data: Uint8Array | string) {
        const hook = this.before;
        if (hook !== null && path.startsWith(hook.dir)) {
          this.before = null;
          await hook.run();
        }
        return super.createIfAbsent(path, data);
      }
    }
    const io = new RacingIO();
    const location = `memory://sink-dyn-race-run-${randomBytes(6).toString('hex')}/db.db/t`;
    await createDynamicBucketTable(io, location);
    // A has assigned buckets to keys 0..5 and is storing its checkpoint when B commits keys 3..8.
    io.before = {
      dir: `${location}-state-a/`,
      run: async () => {
        await runIngest({
          table: location,
          fileIO: io,
          source: new KeySource('keys:b', 3, 9, 'B'),
          stateStore: new FileIOCheckpointStore(io, `${location}-state-b`),
        });
      },
    };
    const sourceA = new KeySource('keys:a', 0, 6, 'A');
    const warnings: string[] = [];
    const a = await runIngest({
      table: location,
      fileIO: io,
      source: sourceA,
      stateStore: new FileIOCheckpointStore(io, `${location}-state-a`),
      logger: { warn: (m) => warnings.push(m) },
    });
    expect(io.before).toBeNull();
    expect(a.status).toBe('source-done');
    expect(sourceA.opened).toEqual([null, null]);
    expect(a.records).toBe(6);
    expect(warnings.some((w) => w.includes('restarting from the last committed checkpoint'))).toBe(true);
    const table = await openTable(location, { fileIO: io });
    const read = (await table.newRead().toArrowTable()).toArray().map((r: { k: number; v: string }) => [r.k, r.v] as const);
    expect(read.length, 'every key once').toBe(9);
    expect(new Map(read)).toEqual(new Map([0, 1, 2, 3, 4, 5, 6, 7, 8].map((k) => [k, k < 6 ? 'A' : 'B'] as const)));
  });
});

/** Records with source positions `src line <n>`; `bad` replaces the record of line n. */
class LinedSource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  readonly id = 'lined:test';
  constructor(
    readonly n: number,
    readonly bad: ReadonlyMap<number, Record<string, unknown>>,
  ) {}
  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) {
      const line = i + 1;
      yield { value: this.bad.get(line) ?? { k: i % 20, v: `v${i}` }, offset: i + 1, position: `src line ${line}` };
    }
  }
}

describe('runIngest with several writers into a dynamic-bucket table: a bad record', () => {
  it.each([
    ['a key of the wrong type', { k: 'abc', v: 'x' }, /^src line 37, column 'k': /],
    ['a NULL key', { k: null, v: 'x' }, /^src line 37, column 'k': .*NULL/i],
    ['a value of the wrong type', { k: 5, v: { nested: true } }, /^src line 37, column 'v': /],
  ])('%s is reported at its source position and nothing is committed', async (_name, record, message) => {
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn-bad-${randomBytes(6).toString('hex')}/db.db/t`;
    await createDynamicBucketTable(io, location);
    const run = runIngest({
      table: location,
      fileIO: io,
      source: new LinedSource(60, new Map([[37, record]])),
      stateStore: new FileIOCheckpointStore(io, `${location}-state`),
      checkpointEvery: 100,
      batchSize: 7,
      parallelism: 3,
    });
    await expect(run).rejects.toThrow(SourceRecordError);
    await expect(run).rejects.toThrow(message);
    expect(await (await openTable(location, { fileIO: io })).snapshotManager.latestId()).toBeNull();
  });
});

describe('runIngest with several writers into a dynamic-bucket table partitioned by columns of many types', () => {
  it('the router and the writers agree on every partition and key hash: three partitions, each key indexed once', async () => {
    const schema = buildInitialSchema(
      {
        fields: [
          { name: 'd', type: 'DATE NOT NULL' },
          { name: 'ts', type: 'TIMESTAMP(3) NOT NULL' },
          { name: 'dec', type: 'DECIMAL(10, 2) NOT NULL' },
          { name: 'b', type: 'BOOLEAN NOT NULL' },
          { name: 's', type: 'STRING NOT NULL' },
          { name: 'k', type: 'BIGINT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        partitionKeys: ['d', 'ts', 'dec', 'b', 's'],
        primaryKeys: ['d', 'ts', 'dec', 'b', 's', 'k'],
        options: { bucket: '-1', 'dynamic-bucket.target-row-num': '3' },
      },
      1,
    );
    const io = new MemoryFileIO();
    const location = `memory://sink-dyn-types-${randomBytes(6).toString('hex')}/db.db/t`;
    await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
    const partitionOf = (p: number) => ({
      d: `2024-0${1 + p}-1${p}`,
      ts: `2024-05-0${1 + p}T10:0${p}:00.123`,
      dec: `${p}.${p}5`,
      b: p % 2 === 0,
      s: `part-${p}-é`,
    });
    const records = Array.from({ length: 180 }, (_, i) => ({ ...partitionOf(i % 3), k: BigInt((i * 7) % 23), v: `v${i}` }));
    const source: ReplayableSource<Record<string, unknown>> = {
      bounded: true,
      id: 'types:test',
      async *open(from: SourceOffset) {
        for (let i = from === null ? 0 : (from as number); i < records.length; i++) yield { value: records[i]!, offset: i + 1 };
      },
    };
    const s = await runIngest({
      table: location,
      fileIO: io,
      source,
      stateStore: new FileIOCheckpointStore(io, `${location}-state`),
      checkpointEvery: 40,
      batchSize: 9,
      parallelism: 3,
    });
    expect(s).toMatchObject({ status: 'source-done', records: 180 });
    const table = await openTable(location, { fileIO: io });
    // 23 keys in each of 3 partitions: 69 rows, and 69 hashes in 3 × 8 index files (buckets of 3 keys).
    // A partition or key the router encoded unlike the writer would be indexed twice (and a
    // writer handed a bucket it does not own fails with WriterRoutingError).
    expect((await table.newRead().toArrowTable()).numRows).toBe(69);
    const latest = (await table.snapshotManager.latest())!;
    const entries = (await readIndexManifest(io, table.context.paths.manifestPath(latest.indexManifest!))).filter(
      (e) => e.indexType === 'HASH',
    );
    expect(new Set(entries.map((e) => Buffer.from(e.partition).toString('hex'))).size).toBe(3);
    expect(entries.length).toBe(24);
    expect(entries.reduce((n, e) => n + e.rowCount, 0)).toBe(69);
  });
});
