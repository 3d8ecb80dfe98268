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

/**
 * 25 records into a fresh table, stopped with a timeout of 0 when `point` is
 * reached the `count`-th time, then run again without a stop; the table after the first run holds
 * exactly what it reports committed.
 */
async function stopThenResume(point: CrashPoint, count: number, mode: 'state-store' | 'self-contained' = 'state-store') {
  const { io, location } = await memoryTable();
  const stop = new AbortController();
  const options: IngestOptions = {
    table: location,
    fileIO: io,
    source: new ArraySource(25),
    ...(mode === 'state-store' ? { stateStore: new FileIOCheckpointStore(io, `${location}-state`) } : { commitUser: 'stop-test' }),
    checkpointEvery: 10,
    batchSize: 2,
    signal: stop.signal,
    stopTimeoutMs: 0,
    crash: stopAt(stop, point, count),
  };
  const stopped = await runIngest(options);
  expect(await tableIds(io, location)).toEqual([...Array(stopped.offset as number).keys()]);
  const resumed = await runIngest({ ...options, signal: new AbortController().signal, crash: undefined });
  return { io, location, stopped, resumed };
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
    // The stop arrives while checkpoint 2 is prepared: its files exist, its state does not.
    const { io, location, stopped, resumed } = await stopThenResume('after-prepare-commit', 2);
    expect(stopped).toMatchObject({ status: 'stopped', abandonedCheckpoint: 2n, offset: 10, lastCheckpointId: 1n });
    expect(await unreferencedDataFiles(io, location)).toEqual([]);
    expect(resumed).toMatchObject({ status: 'source-done', restoredFrom: 1n, recoveredCheckpoints: 0, records: 15, offset: 25 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });

  it('past the timeout, a checkpoint whose state is durable is left for the next run to commit', async () => {
    const { io, location, stopped, resumed } = await stopThenResume('after-state-durable', 2);
    expect(stopped).toMatchObject({ status: 'stopped', abandonedCheckpoint: 2n, offset: 10, lastCheckpointId: 1n });
    expect(resumed).toMatchObject({ status: 'source-done', restoredFrom: 2n, recoveredCheckpoints: 1, records: 5, offset: 25 });
    expect(await tableIds(io, location)).toEqual([...Array(25).keys()]);
  });

  it('self-contained mode: an abandoned checkpoint is read again from the offset in the table', async () => {
    const { io, location, stopped, resumed } = await stopThenResume('after-prepare-commit', 3, 'self-contained');
    expect(stopped).toMatchObject({ status: 'stopped', abandonedCheckpoint: 3n, offset: 20 });
    expect(resumed).toMatchObject({ status: 'source-done', restoredFrom: 2n, records: 5 });
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
