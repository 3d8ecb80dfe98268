import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { FileIOCheckpointStore, SourceRecordError, runIngest } from '../src/index.js';
import { checkedSettings } from '../src/ingest-options.js';
import { resumePipeline } from '../src/ingest-start.js';
import { IngestWriters } from '../src/ingest-writers.js';
import { NO_CRASH } from '../src/crash-points.js';
import { ArraySource, memoryTable } from './helpers.js';

// The steps of runIngest one by one; the pipeline as a whole is covered by ingest-driver.test.ts.
describe('ingest pipeline steps', () => {
  it('checkedSettings applies the defaults and names a bad size', () => {
    const base = { table: 't', source: new ArraySource(1), commitUser: 'u' };
    expect(checkedSettings(base)).toEqual({ parallelism: 1, every: 10_000, batchSize: 1_000 });
    expect(() => checkedSettings({ ...base, checkpointEvery: 0 })).toThrow(/checkpointEvery/);
    expect(() => checkedSettings({ ...base, commitUser: ' ' })).toThrow(/commitUser/);
  });

  it('resumePipeline starts a new commit user, then resumes after what a run committed', async () => {
    const { io, location } = await memoryTable();
    const table = await openTable(location, { fileIO: io });
    const store = new FileIOCheckpointStore(io, `${location}-state`);
    const options = { table: location, fileIO: io, source: new ArraySource(30), stateStore: store, checkpointEvery: 10 };
    const fresh = await resumePipeline(options, table, NO_CRASH);
    expect(fresh).toMatchObject({ offset: null, nextId: 1n, restoredFrom: null, recovered: [] });
    const s = await runIngest(options);
    const resumed = await resumePipeline(options, await openTable(location, { fileIO: io }), NO_CRASH);
    expect(resumed).toMatchObject({ commitUser: s.commitUser, offset: 30, nextId: 4n, restoredFrom: 3n });
    expect(resumed.commitUser).not.toBe(fresh.commitUser);
  });

  it('IngestWriters hands every buffered record to a writer at prepare, and names the source position of a bad one', async () => {
    const { io, location } = await memoryTable();
    const table = await openTable(location, { fileIO: io });
    const writers = new IngestWriters(table, { parallelism: 2, batchSize: 100 }, { crash: NO_CRASH });
    writers.open();
    try {
      for (let i = 0; i < 5; i++) await writers.add({ value: { id: i, v: `v${i}` }, offset: i + 1, position: `in line ${i + 1}` });
      const added: bigint[] = [];
      const prepared = await writers.prepare(7n, (c) => added.push(c.checkpointId));
      expect(added).toEqual([7n, 7n]);
      const rows = prepared.flatMap((c) => c.messages.flatMap((m) => m.newFiles.map((f) => Number(f.rowCount))));
      expect(rows.reduce((a, b) => a + b, 0)).toBe(5);
      await writers.add({ value: { id: null, v: 'x' }, offset: 6, position: 'in line 6' });
      const e = await writers.prepare(8n, () => undefined).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(SourceRecordError);
      expect((e as Error).message).toMatch(/^in line 6, column 'id'/);
    } finally {
      await writers.close();
    }
  });
});
