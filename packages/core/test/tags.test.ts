import { describe, expect, it } from 'vitest';
import { TagManager } from '../src/tag-manager.js';
import { createTag, deleteTag, listTags } from '../src/tags.js';
import { resolveSnapshot } from '../src/time-travel.js';
import { createTestTable, dataFile, message } from './commit-helpers.js';

async function tableWith(n: number) {
  const t = await createTestTable();
  for (let i = 1; i <= n; i++)
    await t.commit.commit({ identifier: BigInt(i), messages: [message('a', { newFiles: [dataFile(i)] })] }, { commitUser: 'u' });
  return t;
}

describe('tags', () => {
  it('creates tags from the latest or a given snapshot, lists and deletes them', async () => {
    const t = await tableWith(3);
    const latestTag = await createTag(t.io, t.paths, 'release');
    expect(latestTag.id).toBe(3);
    await createTag(t.io, t.paths, 'first', { snapshotId: 1 });
    const tags = await listTags(t.io, t.paths);
    expect(tags.map((x) => [x.name, x.tag.id])).toEqual([
      ['first', 1],
      ['release', 3],
    ]);
    // Without a retention the tag file is the snapshot JSON alone, as Java's TagManager writes it
    // (a tagCreateTime would make the tag unreadable to Paimon 0.7).
    const read = await new TagManager(t.io, t.paths).tag('first');
    const snap = await t.snapshots.snapshot(1);
    expect(read).toEqual(snap);
    const text = new TextDecoder().decode(await t.io.read(t.paths.tagPath('first')));
    expect(text).not.toContain('tagCreateTime');
    expect(text).not.toContain('tagTimeRetained');
    // With one, both members follow the snapshot's, creation time in local wall-clock time.
    const now = Date.UTC(2024, 2, 5, 10, 20, 30);
    await createTag(t.io, t.paths, 'kept', { snapshotId: 2, timeRetained: { seconds: 86_400, nanos: 0 }, now: () => now });
    const kept = await new TagManager(t.io, t.paths).tag('kept');
    expect(kept.tagCreateTime).toEqual({ millis: now - new Date(now).getTimezoneOffset() * 60_000, nanoOfMillis: 0 });
    expect(kept.tagTimeRetained).toEqual({ seconds: 86_400, nanos: 0 });
    expect(new TextDecoder().decode(await t.io.read(t.paths.tagPath('kept')))).toMatch(
      /"tagCreateTime" : \[ 2024, 3, \d+, \d+, \d+, 30 \],\n {2}"tagTimeRetained" : 86400\.000000000\n}$/,
    );
    await deleteTag(t.io, t.paths, 'kept');
    await deleteTag(t.io, t.paths, 'first');
    expect((await listTags(t.io, t.paths)).map((x) => x.name)).toEqual(['release']);
    await expect(deleteTag(t.io, t.paths, 'first')).rejects.toThrow(/tag 'first' does not exist; available tags: 'release'/);
  });

  it('refuses an existing name, a numeric name and a missing snapshot', async () => {
    const t = await tableWith(2);
    await createTag(t.io, t.paths, 'v1', { snapshotId: 1 });
    await expect(createTag(t.io, t.paths, 'v1')).rejects.toThrow(/tag 'v1' already exists \(it points at snapshot 1\)/);
    expect((await new TagManager(t.io, t.paths).tag('v1')).id).toBe(1);
    await expect(createTag(t.io, t.paths, '42')).rejects.toThrow(/pure number/);
    await expect(createTag(t.io, t.paths, 'x', { snapshotId: 9 })).rejects.toThrow(/snapshot 9 does not exist/);
    const empty = await createTestTable();
    await expect(createTag(empty.io, empty.paths, 'x')).rejects.toThrow(/no snapshots/);
  });

  it('supports time travel by tag', async () => {
    const t = await tableWith(3);
    await createTag(t.io, t.paths, 'two', { snapshotId: 2 });
    const tagged = await resolveSnapshot({ snapshots: t.snapshots, tags: new TagManager(t.io, t.paths) }, { tag: 'two' });
    expect(tagged!.id).toBe(2);
    expect(tagged!.totalRecordCount).toBe(3);
  });
});
