/**
 * The exactly-once sink's committer makes automatic tags on its commits, as the Table commit path
 * does (it is the same path): checkpoints committed across daily boundaries with a fake clock get
 * exactly one tag per day crossed, on the first checkpoint past midnight plus the delay; a
 * committer restarted after a crash (a new SinkCommitter, no state shared) makes the missing tag
 * of the snapshot its predecessor committed, and no duplicate.
 */
import { describe, expect, it } from 'vitest';
import { buildInitialSchema, openTable } from '@tidemark/core';
import { serializeSchema, type TableSchema } from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import { randomBytes } from 'node:crypto';
import { FileIOCheckpointStore, SinkCommitter, SinkWriter, tableFingerprint } from '../src/index.js';
import { rows, spec } from './helpers.js';

const at = (day: number, hour: number, minute = 0): number => new Date(2024, 5, day, hour, minute).getTime();

describe('SinkCommitter creates automatic tags after its commits', () => {
  it('one tag per day crossed, with the delay; a restarted committer makes a missing tag, never a second one', async () => {
    const io = new MemoryFileIO();
    const location = `memory://sink-tags-${randomBytes(6).toString('hex')}/db.db/t`;
    const schema: TableSchema = buildInitialSchema(
      { ...spec, options: { ...spec.options, 'tag.automatic-creation': 'process-time', 'tag.creation-delay': '15 min' } },
      1_000,
    );
    await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
    const table = { location, fingerprint: await tableFingerprint(io, location) };
    const stateStore = new FileIOCheckpointStore(io, `${location}-state`);
    let now = 0;
    const committer = (): SinkCommitter =>
      new SinkCommitter({ fileIO: io, tableLocation: location, schema, table, commitUser: 'pipeline', stateStore, now: () => now });
    const checkpoint = async (c: SinkCommitter, id: bigint, time: number): Promise<void> => {
      now = time;
      const w = new SinkWriter(io, location, schema, 0);
      await w.write(rows(Number(id) * 10, Number(id) * 10 + 10));
      c.add(await w.prepareCommit(id));
      await c.snapshotState(id, { id: 'src', offset: Number(id), done: false });
      await c.notifyCheckpointComplete(id);
      await w.close();
    };
    const tags = async (): Promise<Array<[string, number]>> =>
      (await (await openTable(location, { fileIO: io })).listTags()).map(({ name, tag }) => [name, tag.id] as [string, number]);

    const first = committer();
    await checkpoint(first, 1n, at(1, 12)); // snapshot 1: the first tag, for May 31
    await checkpoint(first, 2n, at(2, 0, 10)); // 2: within the delay
    await checkpoint(first, 3n, at(2, 0, 20)); // 3: June 1
    await checkpoint(first, 4n, at(2, 23)); // 4
    expect(await tags()).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 3],
    ]);
    // The pipeline crashes after its snapshot 5 (June 3, 00:30) but before tagging it: the
    // snapshot is there, the tag is not (simulated by deleting the tag the commit wrote).
    await checkpoint(first, 5n, at(3, 0, 30));
    const path = `${location}/tag/tag-2024-06-02`;
    expect(await io.exists(path)).toBe(true);
    await io.delete(path);
    const restarted = committer();
    await checkpoint(restarted, 6n, at(3, 1));
    await checkpoint(restarted, 7n, at(3, 2));
    expect(await tags()).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 3],
      ['2024-06-02', 5],
    ]);
  });
});
