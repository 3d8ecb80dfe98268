/**
 * Random histories of a table with branches, checked against a model after every step: writes
 * (with compactions) on any branch, tags made and deleted on any branch, branches made from a tag
 * of any branch, snapshot expiration of any branch down to one snapshot, fast-forward of main,
 * branch deletion, rollback to a tag, and orphan cleanup with no age threshold opened on any branch. After each step
 * the latest rows of every branch and the rows of every tag are the model's, every snapshot of
 * every branch still reads, and every changelog file a snapshot or long-lived changelog names
 * exists: no job on one branch deleted a file another branch needs. A second kind of table writes
 * hash index files at every commit and keeps its changelog longer than its snapshots (changelog
 * expiration runs now and then too); its seed 2 fails without the branch-aware changelog expiration.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { readManifestEntries, readManifestList, type Snapshot } from '@tidemark/format';
import { ChangelogManager, DataFileLocator, FileSystemCatalog, expireChangelogs, openTable, type Table } from '@tidemark/core';
import { expireSnapshots, removeOrphanFiles } from '../src/index.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

type Rows = ReadonlyMap<number, string>;

const sorted = (rows: Rows): Array<{ id: number; v: string }> => [...rows].sort((a, b) => a[0] - b[0]).map(([id, v]) => ({ id, v }));

async function read(t: Table, at: { tag?: string; snapshotId?: number } = {}): Promise<Array<{ id: number; v: string }>> {
  return (await t.newRead(at).toArrowTable())
    .toArray()
    .map((r) => r.toJSON() as { id: number; v: string })
    .map(({ id, v }) => ({ id, v }))
    .sort((a, b) => a.id - b.id);
}

class Model {
  /** Latest rows per branch (main included); a branch without snapshots is absent. */
  readonly rows = new Map<string, Map<number, string>>();
  /** Rows of each tag per branch. */
  readonly tags = new Map<string, Map<string, Rows>>();
}

/** The changelog manifests and files of `s` (a snapshot or long-lived changelog of `t`) all exist. */
async function changelogComplete(t: Table, s: Snapshot, what: string): Promise<number> {
  if (!s.changelogManifestList) return 0;
  const locator = new DataFileLocator(t.paths, t.schema());
  let files = 0;
  for (const m of await readManifestList(t.fileIO, t.paths.manifestPath(s.changelogManifestList))) {
    for await (const e of readManifestEntries(t.fileIO, t.paths.manifestPath(m.fileName))) {
      expect(await t.fileIO.exists(locator.dataFile(e)), `${what}: ${locator.dataFile(e)}`).toBe(true);
      files++;
    }
  }
  return files;
}

/** Every snapshot and long-lived changelog (`changelog/changelog-<id>`) of `t` still has its changelog files. */
async function changelogsComplete(t: Table, branch: string): Promise<number> {
  const changelogs = new ChangelogManager(t.fileIO, t.paths);
  const earliest = await changelogs.earliestId();
  let files = 0;
  for await (const id of changelogs.listIds()) {
    if (earliest === null || id < earliest) continue;
    files += await changelogComplete(t, (await changelogs.tryGet(id))!, `changelog ${id} of ${branch}`);
  }
  for (const id of await t.snapshotManager.sortedIds())
    files += await changelogComplete(t, await t.snapshotManager.snapshot(id), `snapshot ${id} of ${branch}`);
  return files;
}

/** Table options of the histories: plain, and one whose commits write hash index files and whose changelog outlives the snapshots. */
const KINDS: Record<string, Record<string, string>> = {
  plain: { bucket: '1' },
  'changelog and index': { bucket: '-1', 'changelog-producer': 'input', 'changelog.time-retained': '100d' },
};

async function runHistory(seed: number, steps: number, kind: keyof typeof KINDS = 'plain'): Promise<string[]> {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const io: FileIO = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://branches-random-${process.pid}-${kind.replace(/ /g, '-')}-${seed}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['id'],
    // A full compaction every other commit: later snapshots delete the files of earlier ones.
    options: { 'full-compaction.delta-commits': '2', ...KINDS[kind] },
  });
  const loc = catalog.tableLocation('db.t');
  const open = (branch: string): Promise<Table> => openTable(loc, { fileIO: io, branch });
  const model = new Model();
  model.tags.set('main', new Map());
  const log: string[] = [];
  let names = 0;

  const check = async (): Promise<void> => {
    const main = await open('main');
    const branches = ['main', ...(await main.branches().names())];
    expect(branches.sort()).toEqual([...model.tags.keys()].sort());
    for (const b of branches) {
      const t = await open(b);
      const expected = model.rows.get(b);
      expect(await read(t), `${b} latest after ${log.join('; ')}`).toEqual(expected === undefined ? [] : sorted(expected));
      const tags = await t.listTags();
      expect(tags.map((x) => x.name).sort(), `${b} tags`).toEqual([...model.tags.get(b)!.keys()].sort());
      for (const { name } of tags) expect(await read(t, { tag: name }), `${b} tag ${name}`).toEqual(sorted(model.tags.get(b)!.get(name)!));
      await changelogsComplete(t, b);
      for (const id of await t.snapshotManager.sortedIds()) {
        await read(t, { snapshotId: id }).catch((e: Error) => {
          throw new Error(`snapshot ${id} of ${b} after ${log.join('; ')}: ${e.message}`);
        });
      }
    }
  };

  for (let step = 0; step < steps; step++) {
    const branches = [...model.tags.keys()];
    const withSnapshots = branches.filter((b) => model.rows.has(b));
    const op = pick([
      ...['write', 'write', 'write', 'tag', 'tag', 'branch', 'branch', 'expire', 'expire', 'orphans', 'orphans'],
      ...['untag', 'fast-forward', 'delete', 'rollback'],
    ]);
    const b = pick(branches);
    if (op === 'write') {
      const rows = [{ id: 1 + Math.floor(random() * 6), v: `s${step}` }];
      if (random() < 0.5) rows.push({ id: 1 + Math.floor(random() * 6), v: `s${step}b` });
      const current = new Map(model.rows.get(b) ?? []);
      for (const r of rows) current.set(r.id, r.v);
      await (await open(b)).append(rows, { expire: false });
      model.rows.set(b, current);
      log.push(`write ${b}`);
    } else if (op === 'tag' && model.rows.has(b)) {
      const name = `t${++names}`;
      await (await open(b)).createTag(name);
      model.tags.get(b)!.set(name, new Map(model.rows.get(b)!));
      log.push(`tag ${b} ${name}`);
    } else if (op === 'untag' && model.tags.get(b)!.size > 0) {
      const name = pick([...model.tags.get(b)!.keys()]);
      await (await open(b)).deleteTag(name);
      model.tags.get(b)!.delete(name);
      log.push(`untag ${b} ${name}`);
    } else if (op === 'branch' && model.tags.get(b)!.size > 0 && branches.length < 4) {
      const tag = pick([...model.tags.get(b)!.keys()]);
      const name = `b${++names}`;
      await (await open(b)).branches().create(name, { tag });
      const rows = model.tags.get(b)!.get(tag)!;
      model.rows.set(name, new Map(rows));
      model.tags.set(name, new Map([[tag, rows]]));
      log.push(`branch ${name} from ${b}:${tag}`);
    } else if (op === 'expire' && model.rows.has(b)) {
      const retain = 1 + Math.floor(random() * 2);
      const t = await open(b);
      await expireSnapshots(t, { retainMin: 1, retainMax: retain, olderThanMs: Date.now() + 1000 });
      // Long-lived changelogs expire on their own schedule: now and then all but the last one.
      if (kind !== 'plain' && random() < 0.5) await expireChangelogs(t, { retainMin: 1, retainMax: 1, olderThanMs: Date.now() + 1000 });
      log.push(`expire ${b} to ${retain}`);
    } else if (op === 'fast-forward') {
      const source = withSnapshots.filter((x) => x !== 'main');
      if (source.length === 0) continue;
      const from = pick(source);
      const main = await open('main');
      await main.branches().fastForward(from);
      model.rows.set('main', new Map(model.rows.get(from)!));
      // Main's tags from the branch's earliest snapshot on were replaced by the branch's.
      const kept = new Map<string, Rows>();
      for (const { name } of await (await open('main')).listTags()) {
        kept.set(name, model.tags.get(from)!.get(name) ?? model.tags.get('main')!.get(name)!);
      }
      model.tags.set('main', kept);
      log.push(`fast-forward main to ${from}`);
    } else if (op === 'rollback' && model.tags.get(b)!.size > 0) {
      const tag = pick([...model.tags.get(b)!.keys()]);
      await (await open(b)).rollbackTo(tag, { force: true });
      model.rows.set(b, new Map(model.tags.get(b)!.get(tag)!));
      // Tags of later snapshots went with them.
      const kept = new Map<string, Rows>();
      for (const { name } of await (await open(b)).listTags()) kept.set(name, model.tags.get(b)!.get(name)!);
      model.tags.set(b, kept);
      log.push(`rollback ${b} to ${tag}`);
    } else if (op === 'delete' && b !== 'main') {
      await (await open('main')).branches().delete(b);
      model.rows.delete(b);
      model.tags.delete(b);
      log.push(`delete ${b}`);
    } else if (op === 'orphans') {
      const now = Date.now() + 1000;
      const r = await removeOrphanFiles(await open(b), {
        olderThanMs: now,
        inProgressGraceMs: 0,
        now: () => now,
        expiringSnapshotWaitMs: 0,
      });
      log.push(`orphans on ${b} (${r.filesDeleted})`);
    } else continue;
    await check();
  }
  return log;
}

describe('random histories with branches', () => {
  // Seed 5 expires main past the latest snapshot of a branch main was fast-forwarded to (the
  // newest snapshot another branch shares must count too); 24 seeds pass too, in twice the time.
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])(
    'seed %i: every branch and tag reads as the model after every step',
    async (seed) => {
      const log = await runHistory(seed, 60);
      // The history did what it is for: branches, expirations and cleanups that deleted files.
      expect(log.some((l) => l.startsWith('branch '))).toBe(true);
      expect(log.some((l) => /^orphans .*\([1-9]/.test(l) || l.startsWith('expire '))).toBe(true);
    },
    120_000,
  );

  it.each([1, 2, 3, 4, 5, 6])(
    'with hash index files and long-lived changelogs, seed %i',
    async (seed) => {
      const log = await runHistory(seed, 60, 'changelog and index');
      expect(log.some((l) => l.startsWith('branch '))).toBe(true);
    },
    120_000,
  );
});
