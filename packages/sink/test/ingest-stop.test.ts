import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import {
  FileIOCheckpointStore,
  runIngest,
  type CrashPoint,
  type IngestOptions,
  type ReplayableSource,
  type SourceOffset,
  type SourceOpenOptions,
  type SourceRecord,
} from '../src/index.js';
import { ArraySource, memoryTable, tableIds } from './helpers.js';

/** `n` records, then the stop signal aborts while the source waits for more (a service told to stop). */
class StoppingSource implements ReplayableSource<Record<string, unknown>> {
  readonly id = 'array:test';
  readonly bounded = false;
  constructor(
    readonly n: number,
    private readonly stop: AbortController,
  ) {}
  async *open(from: SourceOffset, options: SourceOpenOptions = {}): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    for (let i = from === null ? 0 : (from as number); i < this.n; i++) yield { value: { id: i, v: `v${i}` }, offset: i + 1 };
    if (options.signal === undefined) throw new Error('no stop signal');
    this.stop.abort();
  }
}

/** Data files in the table directory that no live snapshot entry names. */
async function unreferencedDataFiles(io: FileIO, location: string): Promise<string[]> {
  const t = await openTable(location, { fileIO: io });
  const live = new Set((await t.newRead().plan()).splits.flatMap((s) => s.files.map((f) => f.path)));
  const out: string[] = [];
  for await (const st of io.list(location)) if (/\/data-[^/]+\.parquet$/.test(st.path) && !live.has(st.path)) out.push(st.path);
  return out;
}

/** Aborts `stop` when the pipeline reaches `point` for the `count`-th time. */
function stopAt(stop: AbortController, point: CrashPoint, count: number): { hit(p: CrashPoint): void } {
  let n = 0;
  return {
    hit(p) {
      if (p === point && ++n === count) stop.abort();
    },
  };
}

describe('runIngest: a stop with a timeout', () => {
  it('without a timeout, the last checkpoint commits what was read', async () => {
    const { io, location } = await memoryTable();
    const stop = new AbortController();
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const s = await runIngest({
      table: location,
      fileIO: io,
      source: new StoppingSource(25, stop),
      stateStore: store,
      signal: stop.signal,
      checkpointEvery: 10,
    });
    expect(s).toMatchObject({ status: 'stopped', abandonedCheckpoint: null, offset: 25, lastCheckpointId: 3n });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });

  it('past the timeout, a checkpoint not yet durable is abandoned and its files deleted; the next run reads it again', async () => {
    const { io, location } = await memoryTable();
    const stop = new AbortController();
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const options: IngestOptions = {
      table: location,
      fileIO: io,
      source: new ArraySource(25),
      stateStore: store,
      checkpointEvery: 10,
      batchSize: 2,
      signal: stop.signal,
      stopTimeoutMs: 0,
      // The stop arrives while checkpoint 2 is prepared: its files exist, its state does not.
      crash: stopAt(stop, 'after-prepare-commit', 2),
    };
    const s = await runIngest(options);
    expect(s).toMatchObject({ status: 'stopped', abandonedCheckpoint: 2n, offset: 10, lastCheckpointId: 1n });
    expect(await tableIds(io, location)).toEqual([...Array(10).keys()]);
    expect(await unreferencedDataFiles(io, location)).toEqual([]);
    const again = await runIngest({ ...options, signal: new AbortController().signal, crash: undefined });
    expect(again).toMatchObject({ status: 'source-done', restoredFrom: 1n, recoveredCheckpoints: 0, records: 15, offset: 25 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });

  it('past the timeout, a checkpoint whose state is durable is left for the next run to commit', async () => {
    const { io, location } = await memoryTable();
    const stop = new AbortController();
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const options: IngestOptions = {
      table: location,
      fileIO: io,
      source: new ArraySource(25),
      stateStore: store,
      checkpointEvery: 10,
      signal: stop.signal,
      stopTimeoutMs: 0,
      crash: stopAt(stop, 'after-state-durable', 2),
    };
    const s = await runIngest(options);
    expect(s).toMatchObject({ status: 'stopped', abandonedCheckpoint: 2n, offset: 10, lastCheckpointId: 1n });
    expect(await tableIds(io, location)).toEqual([...Array(10).keys()]);
    const again = await runIngest({ ...options, signal: new AbortController().signal, crash: undefined });
    expect(again).toMatchObject({ status: 'source-done', restoredFrom: 2n, recoveredCheckpoints: 1, records: 5, offset: 25 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });

  it('self-contained mode: an abandoned checkpoint is read again from the offset in the table', async () => {
    const { io, location } = await memoryTable();
    const stop = new AbortController();
    const options: IngestOptions = {
      table: location,
      fileIO: io,
      source: new ArraySource(25),
      commitUser: 'stop-test',
      checkpointEvery: 10,
      signal: stop.signal,
      stopTimeoutMs: 0,
      crash: stopAt(stop, 'after-prepare-commit', 3),
    };
    const s = await runIngest(options);
    expect(s).toMatchObject({ status: 'stopped', abandonedCheckpoint: 3n, offset: 20 });
    const again = await runIngest({ ...options, signal: new AbortController().signal, crash: undefined });
    expect(again).toMatchObject({ status: 'source-done', restoredFrom: 2n, records: 5 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
    expect(await unreferencedDataFiles(io, location)).toEqual([]);
  });

  it('refuses a negative stop timeout', async () => {
    const { io, location } = await memoryTable();
    await expect(
      runIngest({ table: location, fileIO: io, source: new ArraySource(1), commitUser: 'u', stopTimeoutMs: -1 }),
    ).rejects.toThrow(/stopTimeoutMs/);
  });
});
