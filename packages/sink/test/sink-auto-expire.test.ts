import { describe, expect, it } from 'vitest';
import { SnapshotManager, TablePaths, buildInitialSchema } from '@tidemark/core';
import { serializeSchema } from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import { randomBytes } from 'node:crypto';
import { FileIOCheckpointStore, SinkCommitter, SinkWriter, tableFingerprint } from '../src/index.js';
import { rows, spec, tableIds } from './helpers.js';

async function run(
  options: Record<string, string>,
  committerOptions: { autoExpire?: boolean } = {},
): Promise<{ earliest: number | null; latest: number | null; ids: number[] }> {
  const io = new MemoryFileIO();
  const location = `memory://sink-expire-${randomBytes(6).toString('hex')}/db.db/t`;
  const schema = buildInitialSchema({ ...spec, options: { ...spec.options, ...options } }, 1_000);
  await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
  const committer = new SinkCommitter({
    fileIO: io,
    tableLocation: location,
    schema,
    table: { location, fingerprint: await tableFingerprint(io, location) },
    commitUser: 'pipeline',
    stateStore: new FileIOCheckpointStore(io, `${location}-state`),
    ...committerOptions,
  });
  for (let id = 1n; id <= 6n; id++) {
    const w = new SinkWriter(io, location, schema, 0);
    await w.write(rows(Number(id) * 10, Number(id) * 10 + 10));
    committer.add(await w.prepareCommit(id));
    await committer.snapshotState(id, { id: 'src', offset: Number(id), done: false });
    await committer.notifyCheckpointComplete(id);
    await w.close();
    await new Promise((r) => setTimeout(r, 5));
  }
  const sm = new SnapshotManager(io, new TablePaths(location));
  return { earliest: await sm.earliestId(), latest: await sm.latestId(), ids: await tableIds(io, location) };
}

describe('SinkCommitter expires snapshots after its commits, as Paimon does', () => {
  const all = Array.from({ length: 60 }, (_, i) => i + 10);
  it('keeps snapshot.num-retained.min snapshots once they are older than snapshot.time-retained', async () => {
    const r = await run({ 'snapshot.num-retained.min': '2', 'snapshot.time-retained': '1 ms' });
    expect(r.latest).toBe(6);
    expect(r.earliest).toBe(5);
    expect(r.ids).toEqual(all);
  });
  it('keeps no more than snapshot.num-retained.max snapshots, however young', async () => {
    // snapshot.time-retained keeps its default (1 hour), so only the maximum can expire these snapshots.
    const r = await run({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3' });
    expect(r.latest).toBe(6);
    expect(r.earliest).toBe(4);
    expect(r.ids).toEqual(all);
  });
  it('autoExpire: false leaves every snapshot, even beyond snapshot.num-retained.max', async () => {
    const r = await run({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '3' }, { autoExpire: false });
    expect(r.earliest).toBe(1);
    expect(r.latest).toBe(6);
    expect(r.ids).toEqual(all);
  });
  it('write-only=true leaves every snapshot for a maintenance job', async () => {
    const r = await run({
      'snapshot.num-retained.min': '2',
      'snapshot.num-retained.max': '3',
      'snapshot.time-retained': '1 ms',
      'write-only': 'true',
    });
    expect(r.earliest).toBe(1);
    expect(r.latest).toBe(6);
    expect(r.ids).toEqual(all);
  });
});
