import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SnapshotManager, TablePaths, listInflightRecords } from '@tidemark/core';
import {
  CRASH_POINTS,
  FileIOCheckpointStore,
  JsonLinesFileSource,
  OFFSETS_PROPERTY,
  SinkUsageError,
  StateMismatchError,
  runIngest,
  type CrashHook,
  type CrashPoint,
} from '../src/index.js';
import { ArraySource, SimulatedCrash, memoryTable, tableIds } from './helpers.js';

/** Throws (instead of SIGKILL) the `count`-th time `point` is reached. */
function crashAt(point: CrashPoint, count: number): CrashHook {
  let n = 0;
  return {
    hit(p) {
      if (p === point && ++n === count) throw new SimulatedCrash(`${p}:${count}`);
    },
  };
}

/** 1 when `run` stopped with a simulated crash, 0 when it completed; other errors propagate. */
async function crashes_(run: () => Promise<unknown>): Promise<number> {
  try {
    await run();
    return 0;
  } catch (e) {
    if (e instanceof SimulatedCrash) return 1;
    throw e;
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('runIngest with a checkpoint state store', () => {
  it('ingests a bounded source, and a rerun adds nothing', async () => {
    const { io, location } = await memoryTable();
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const source = new ArraySource(95);
    const s = await runIngest({ table: location, fileIO: io, source, stateStore: store, checkpointEvery: 20, parallelism: 3 });
    expect(s).toMatchObject({ status: 'source-done', mode: 'state-store', records: 95, checkpoints: 5, lastCheckpointId: 5n, offset: 95 });
    expect(await tableIds(io, location)).toEqual([...Array(95).keys()]);
    const again = await runIngest({ table: location, fileIO: io, source, stateStore: store, checkpointEvery: 20, parallelism: 3 });
    expect(again).toMatchObject({ status: 'source-done', records: 0, restoredFrom: 5n, commitUser: s.commitUser });
    expect(source.opened).toEqual([null, 95]);
    expect(await tableIds(io, location)).toEqual([...Array(95).keys()]);
  });

  // Append tables never compact in their writers: 'before-compact-snapshot' is covered by sink-compaction.test.ts.
  for (const point of CRASH_POINTS.filter((p) => p !== 'before-compact-snapshot')) {
    it(`holds every record exactly once after crashes at ${point}`, async () => {
      const { io, location } = await memoryTable();
      const store = new FileIOCheckpointStore(io, `${location}-state`);
      const users = new Set<string>();
      let crashes = 0;
      for (const count of [1, 3, 1, 2]) {
        crashes += await crashes_(() =>
          runIngest({
            table: location,
            fileIO: io,
            source: new ArraySource(70),
            stateStore: store,
            checkpointEvery: 10,
            parallelism: 2,
            crash: crashAt(point, count),
          }),
        );
      }
      // In-process, a throw inside the snapshot create is retried by the commit (a real SIGKILL is
      // exercised by the chaos harness), so that point cannot stop a run here.
      if (point !== 'during-commit-before-snapshot') expect(crashes).toBeGreaterThanOrEqual(2);
      const s = await runIngest({
        table: location,
        fileIO: io,
        source: new ArraySource(70),
        stateStore: store,
        checkpointEvery: 10,
        parallelism: 2,
      });
      users.add(s.commitUser);
      expect(s.status).toBe('source-done');
      expect(await tableIds(io, location)).toEqual([...Array(70).keys()]);
      const sm = new SnapshotManager(io, new TablePaths(location));
      const ids: bigint[] = [];
      for await (const snap of sm.iterateForward()) {
        ids.push(snap.commitIdentifier);
        users.add(snap.commitUser);
      }
      // one commit user for the whole pipeline, identifiers strictly increasing
      expect(users.size).toBe(1);
      expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
      expect(new Set(ids).size).toBe(ids.length);
      let records = 0;
      for await (const _ of listInflightRecords(io, location)) records++;
      expect(records).toBe(0);
    });
  }

  it('refuses a state that belongs to another table or source', async () => {
    const a = await memoryTable('a');
    const store = new FileIOCheckpointStore(a.io, `${a.location}-state`);
    await runIngest({ table: a.location, fileIO: a.io, source: new ArraySource(5), stateStore: store });
    const b = await memoryTable('b');
    await b.io.write(`${a.location.replace(/\/a$/, '/b2')}/schema/schema-0`, await a.io.read(`${b.location}/schema/schema-0`));
    await expect(runIngest({ table: b.location, fileIO: a.io, source: new ArraySource(5), stateStore: store })).rejects.toThrow(
      StateMismatchError,
    );
    await expect(runIngest({ table: b.location, fileIO: a.io, source: new ArraySource(5), stateStore: store })).rejects.toThrow(
      /belongs to table/,
    );
    await expect(
      runIngest({ table: a.location, fileIO: a.io, source: new ArraySource(5, 'array:other'), stateStore: store }),
    ).rejects.toThrow(/belongs to source/);
  });
});

describe('runIngest in self-contained mode', () => {
  it('needs a commit user', async () => {
    const { io, location } = await memoryTable();
    await expect(runIngest({ table: location, fileIO: io, source: new ArraySource(3) })).rejects.toThrow(SinkUsageError);
  });

  it("resumes from the offsets in the commit user's latest snapshot", async () => {
    const { io, location } = await memoryTable();
    let crashes = 0;
    for (const [point, count] of [
      ['after-prepare-commit', 2],
      ['after-file-flush', 3],
      ['after-snapshot-before-ack', 1],
      ['after-prepare-commit', 1],
    ] as const) {
      crashes += await crashes_(() =>
        runIngest({
          table: location,
          fileIO: io,
          source: new ArraySource(50),
          commitUser: 'pipe-1',
          checkpointEvery: 8,
          parallelism: 2,
          crash: crashAt(point, count),
        }),
      );
    }
    expect(crashes).toBeGreaterThanOrEqual(3);
    const source = new ArraySource(50);
    const s = await runIngest({ table: location, fileIO: io, source, commitUser: 'pipe-1', checkpointEvery: 8, parallelism: 2 });
    expect(s).toMatchObject({ status: 'source-done', mode: 'self-contained', commitUser: 'pipe-1' });
    expect(source.opened[0]).not.toBeNull();
    expect(await tableIds(io, location)).toEqual([...Array(50).keys()]);
    const latest = await new SnapshotManager(io, new TablePaths(location)).latest();
    expect(JSON.parse(latest!.properties![OFFSETS_PROPERTY]!)).toMatchObject({ offset: 50, source: 'array:test' });
  });
});

describe('JsonLinesFileSource', () => {
  it('hands out byte offsets that resume after the record, skipping blank lines, with a last line lacking a newline', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sink-src-'));
    dirs.push(dir);
    const file = join(dir, 'in.jsonl');
    await writeFile(file, '{"id":1}\n\n{"id":2,"s":"é"}\n{"id":3}');
    const src = new JsonLinesFileSource(file);
    const all = [];
    for await (const r of src.open(null)) all.push(r);
    expect(all.map((r) => r.value.id)).toEqual([1, 2, 3]);
    const rest = [];
    for await (const r of src.open(all[0]!.offset)) rest.push(r.value.id);
    expect(rest).toEqual([2, 3]);
    const none = [];
    for await (const r of src.open(all[2]!.offset)) none.push(r);
    expect(none).toEqual([]);
    await expect(async () => {
      for await (const _ of src.open(10_000)) void _;
    }).rejects.toThrow(/past the end/);
  });
});
