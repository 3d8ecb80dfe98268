/**
 * Automatic tag creation searches the snapshots since the last automatic tag for the first one
 * past the period's end (galloping, then halving). When snapshot expiration removes some of them
 * during the search, the run goes on from the new earliest snapshot and tags the first crossing
 * snapshot that still exists, as Java does (its scan starts at the earliest snapshot when the next
 * one expired). It used to give up and move past the period for good: its tag was never made.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { AutoTagState, runAutoTags } from '../src/index.js';
import { instrumentFileIO } from '../../../test/support/instrumented-file-io.mjs';
import { at, autoTagTable, bareCommit } from './auto-tag-helpers.js';

describe('automatic tags and snapshots expired during the search', () => {
  it('tags the first crossing snapshot that still exists', async () => {
    let onRead: ((path: string) => Promise<void>) | null = null;
    const io = instrumentFileIO(new MemoryFileIO(), {
      async before(r) {
        if (onRead !== null && r.method === 'read' && r.path !== undefined) await onRead(r.path);
      },
    });
    const t = await autoTagTable({ 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'daily' }, io);
    await bareCommit(t, at(1, 9), 1n);
    // The first automatic tag (2024-05-31, on snapshot 1), made by a maintenance run.
    expect((await runAutoTags(t.context, new AutoTagState(), { now: () => at(1, 9, 1), fullCheck: true })).created).toEqual([
      { name: '2024-05-31', snapshotId: 1 },
    ]);
    for (let i = 2; i <= 12; i++) await bareCommit(t, i < 12 ? at(1, 10 + i) : at(2, 0, 10), BigInt(i));

    // While the next run searches snapshots 2..12, an expiration removes 2..6.
    let expired = false;
    onRead = async (path) => {
      if (expired || !path.endsWith('/snapshot/snapshot-3')) return;
      expired = true;
      onRead = null;
      await io.write(t.paths.earliestHint, '7');
      for (let id = 2; id <= 6; id++) await io.delete(t.paths.snapshotPath(id));
    };
    const run = await runAutoTags(t.context, new AutoTagState(), { now: () => at(2, 1), fullCheck: true });
    expect(expired).toBe(true);
    expect(run.created).toEqual([{ name: '2024-06-01', snapshotId: 12 }]);
    expect((await t.listTags()).map((x) => [x.name, x.tag.id])).toEqual([
      ['2024-05-31', 1],
      ['2024-06-01', 12],
    ]);
  });
});
