/**
 * Automatic tag expiration (`tag.num-retained-max`) deletes automatic tags only: a tag a user made
 * (`tidemark tag create`, `table.createTag`) survives every commit and maintenance run of every
 * mode, including `batch` mode (where Java counts and deletes every tag) and a daily period (where
 * Java takes any name starting with a date, such as `2024-06-01 before-migration`, for an
 * automatic tag). A seeded model run mixes commits, user tags and maintenance checks.
 */
import { describe, expect, it } from 'vitest';
import { AutoTagState, runAutoTags, type Table } from '../src/index.js';
import { Clocked, at, autoTagTable } from './auto-tag-helpers.js';

const table = autoTagTable;

async function tagNames(t: Table): Promise<string[]> {
  return (await t.listTags()).map(({ name }) => name).sort();
}

/** A maintenance check (`tidemark maintain`), as a fresh process runs it. */
function maintain(t: Table, now: number, dryRun = false) {
  return runAutoTags(t.context, new AutoTagState(), { now: () => now, fullCheck: true, dryRun });
}

describe('automatic tag expiration leaves user-made tags alone', () => {
  it('batch mode: tag.num-retained-max counts and deletes batch-write tags only', async () => {
    const t = await table({ 'tag.automatic-creation': 'batch', 'tag.num-retained-max': '2' });
    const c = new Clocked(t, true);
    const first = await c.commitAt(at(1, 9));
    await t.createTag('release-1', { snapshotId: first });
    await c.commitAt(at(2, 9));
    await c.commitAt(at(3, 9));
    await c.commitAt(at(4, 9));
    expect(await tagNames(t)).toEqual(['batch-write-2024-06-03', 'batch-write-2024-06-04', 'release-1']);
    await t.createTag('release-2');
    const dry = await maintain(t, at(4, 10), true);
    expect(dry.expiredByCount).toEqual([]);
    const run = await maintain(t, at(4, 10));
    expect(run.expiredByCount).toEqual([]);
    expect(await tagNames(t)).toEqual(['batch-write-2024-06-03', 'batch-write-2024-06-04', 'release-1', 'release-2']);
  });

  it('a daily period: a user tag whose name starts with a date is not an automatic tag', async () => {
    const t = await table({ 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'daily', 'tag.num-retained-max': '2' });
    const c = new Clocked(t, false);
    const first = await c.commitAt(at(1, 12)); // tags 2024-05-31
    await t.createTag('2024-05-30 before-migration', { snapshotId: first });
    await t.createTag('keep', { snapshotId: first });
    await c.commitAt(at(2, 12)); // 06-01
    await c.commitAt(at(3, 12)); // 06-02: 05-31 goes
    await c.commitAt(at(4, 12)); // 06-03: 06-01 goes
    expect(await tagNames(t)).toEqual(['2024-05-30 before-migration', '2024-06-02', '2024-06-03', 'keep']);
    await maintain(t, at(4, 13));
    expect(await tagNames(t)).toEqual(['2024-05-30 before-migration', '2024-06-02', '2024-06-03', 'keep']);
  });

  it('model: random commits, user tags and maintenance runs never delete a user tag and keep at most max automatic tags', async () => {
    let seed = 20261206;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const mode of ['batch', 'process-time'] as const) {
      const max = 3;
      const options: Record<string, string> = { 'tag.automatic-creation': mode, 'tag.num-retained-max': String(max) };
      if (mode === 'process-time') options['tag.creation-period'] = 'daily';
      const t = await table(options);
      const c = new Clocked(t, mode === 'batch');
      const userTags = new Set<string>();
      let time = at(1, 0);
      for (let step = 0; step < 60; step++) {
        time += Math.floor(random() * 30 * 3_600_000);
        const r = random();
        if (r < 0.6) await c.commitAt(time);
        else if (r < 0.85) {
          if ((await t.snapshotManager.latestId()) === null) continue;
          // Names that look automatic to Java's parser (but are no period's name), and plain ones.
          const name = random() < 0.5 ? `user-${step}` : mode === 'batch' ? `batch-write-manual-${step}` : `2024-06-01 ${step}`;
          await t.createTag(name);
          userTags.add(name);
        } else await maintain(t, time);
        const names = await tagNames(t);
        for (const u of userTags) expect(names, `step ${step}: user tag ${u}`).toContain(u);
        expect(names.filter((x) => !userTags.has(x)).length, `step ${step}: ${names.join(', ')}`).toBeLessThanOrEqual(max);
      }
      expect(userTags.size).toBeGreaterThan(3);
    }
  });
});
