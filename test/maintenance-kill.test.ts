/**
 * SIGKILL in the middle of snapshot expiration, then a rerun: a child process
 * (test/workers/expire-worker.ts, bundled with rolldown like concurrent-commits.test.ts does)
 * expires a table with many snapshots and is killed either by a crash point inside its FileIO
 * (after K deletions, K random) or by the parent after a random 20–300 ms. After the kill and
 * again after a complete rerun: every retained snapshot and every tag reads back exactly as
 * before, the earliest snapshot is found correctly, the snapshots form a contiguous range, and no
 * file a retained snapshot or tag references is missing. Local disk, and one trial on the real S3
 * server when configured.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { readManifestEntries, readManifestList, type Snapshot } from '@tidemark/format';
import {
  ChangelogManager,
  FileSystemCatalog,
  SchemaManager,
  SnapshotManager,
  TablePaths,
  TagManager,
  createTag,
  liveEntries,
  openTable,
} from '@tidemark/core';
import { DataFileLocator, expireSnapshots, removeOrphanFiles, verifyTable } from '@tidemark/maintenance';
import { SnapshotNotFoundError } from '@tidemark/core';
import { itOnS3Warehouse } from './support/table-locations.js';
import { bundleWorker, removeWorkerBundle } from './support/worker-bundle.js';
import { columns } from './support/table-definitions.mjs';

const RETAIN = 5;
let bundle = '';
const dirs: string[] = [];

beforeAll(async () => {
  bundle = await bundleWorker('expire-worker');
}, 120_000);

afterAll(async () => {
  await removeWorkerBundle(bundle);
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

interface WorkerRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runWorker(
  config: {
    root: string;
    s3?: S3Options;
    crashAfterDeletes?: number;
    snapshotBatchSize?: number;
    crashInSnapshotBatch?: number;
    crashInChangelogBatch?: number;
    nowOffsetMs?: number;
    retainMin?: number;
  },
  killAfterMs?: number,
): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, JSON.stringify({ retainMin: RETAIN, expireLimit: 10_000, ...config })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** ~30 snapshots: appends to two partitions, overwrites (so files die), tags on snapshots 4 and 15. */
async function buildTable(io: FileIO, warehouse: string): Promise<string> {
  const catalog = new FileSystemCatalog(warehouse, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: columns('id INT', 'p STRING'),
    partitionKeys: ['p'],
  });
  const location = catalog.tableLocation('db.t');
  const table = await openTable(location, { fileIO: io });
  let id = 0;
  for (let s = 1; s <= 30; s++) {
    const p = s % 3 === 0 ? 'b' : 'a';
    const rows = [
      { id: ++id, p },
      { id: ++id, p },
    ];
    const r = s % 7 === 0 ? await table.overwrite(rows, { partition: { p } }) : await table.append(rows);
    expect(r.status).toBe('committed');
    if (s === 4) await createTag(io, table.paths, 'early', { snapshotId: 4 });
    if (s === 15) await createTag(io, table.paths, 'middle', { snapshotId: 15 });
  }
  return location;
}

type Expected = Map<string, string[]>;

async function rowsAt(io: FileIO, location: string, at: { snapshotId?: number; tag?: string }): Promise<string[]> {
  const table = await openTable(location, { fileIO: io });
  const t = await table.newRead(at).toArrowTable();
  return t
    .toArray()
    .map((r) => JSON.stringify(r.toJSON()))
    .sort();
}

/** Rows of every snapshot that must survive (the newest RETAIN) and of every tag. */
async function capture(io: FileIO, location: string): Promise<Expected> {
  const paths = new TablePaths(location);
  const latest = (await new SnapshotManager(io, paths).latestId())!;
  const out: Expected = new Map();
  for (let id = latest - RETAIN + 1; id <= latest; id++) out.set(`snapshot ${id}`, await rowsAt(io, location, { snapshotId: id }));
  for (const { name } of await new TagManager(io, paths).list()) out.set(`tag ${name}`, await rowsAt(io, location, { tag: name }));
  return out;
}

/** A fresh copy of the template table under `dir` (see {@link builtTable}) for trial `i`: its location. */
async function trialTable(dir: string, i: number): Promise<string> {
  const root = join(dir, `trial-${i}`);
  await cp(join(dir, 'template'), root, { recursive: true });
  return join(root, 'db.db', 't');
}

/** {@link buildTable} in `warehouse`, with the rows expiration must keep ({@link capture}) and the latest snapshot id. */
async function builtTable(io: FileIO, warehouse: string): Promise<{ location: string; expected: Expected; latest: number }> {
  const location = await buildTable(io, warehouse);
  return { location, expected: await capture(io, location), latest: (await new SnapshotManager(io, new TablePaths(location)).latestId())! };
}

/** Manifest lists, manifests and data files of `snaps` that do not exist. */
async function missingReferences(io: FileIO, paths: TablePaths, snaps: readonly Snapshot[]): Promise<string[]> {
  const schema = await new SchemaManager(io, paths).latest();
  const locator = new DataFileLocator(paths, schema);
  const missing: string[] = [];
  for (const s of snaps) {
    for (const list of [s.baseManifestList, s.deltaManifestList]) {
      const p = paths.manifestPath(list);
      if (!(await io.exists(p))) {
        missing.push(p);
        continue;
      }
      for (const m of await readManifestList(io, p))
        if (!(await io.exists(paths.manifestPath(m.fileName)))) missing.push(paths.manifestPath(m.fileName));
    }
    if (missing.length > 0) continue;
    for (const e of (await liveEntries(io, paths, s)).values()) {
      const f = locator.dataFile(e);
      if (!(await io.exists(f))) missing.push(f);
    }
  }
  return [...new Set(missing)].sort();
}

/** The invariants that must hold after a kill and after a rerun. */
async function verify(io: FileIO, location: string, expected: Expected, latest: number, what: string): Promise<number[]> {
  const paths = new TablePaths(location);
  const sm = new SnapshotManager(io, paths);
  const ids = await sm.sortedIds();
  expect(ids.length, what).toBeGreaterThanOrEqual(RETAIN);
  expect(ids, `${what}: contiguous snapshot range`).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0]! + i));
  expect(ids[ids.length - 1], what).toBe(latest);
  expect(await sm.earliestId(), `${what}: earliest`).toBe(ids[0]);
  const snaps: Snapshot[] = [];
  for (let id = latest - RETAIN + 1; id <= latest; id++) snaps.push(await sm.snapshot(id));
  for (const { tag } of await new TagManager(io, paths).list()) snaps.push(tag);
  expect(await missingReferences(io, paths, snaps), `${what}: missing files`).toEqual([]);
  expect(await capture(io, location), `${what}: rows`).toEqual(expected);
  return ids;
}

async function killAndRerun(
  io: FileIO,
  location: string,
  expected: Expected,
  latest: number,
  kill: { crashAfterDeletes?: number; killAfterMs?: number },
  s3?: S3Options,
): Promise<void> {
  const what =
    kill.crashAfterDeletes !== undefined ? `crash after ${kill.crashAfterDeletes} deletes` : `SIGKILL after ${kill.killAfterMs} ms`;
  const first = await runWorker(
    {
      root: location,
      ...(s3 ? { s3 } : {}),
      ...(kill.crashAfterDeletes !== undefined ? { crashAfterDeletes: kill.crashAfterDeletes } : {}),
    },
    kill.killAfterMs,
  );
  if (kill.crashAfterDeletes !== undefined) expect(first.signal, `${what}: ${first.stderr}`).toBe('SIGKILL');
  else expect(first.signal === 'SIGKILL' || first.code === 0, `${what}: ${first.stderr}`).toBe(true);
  await verify(io, location, expected, latest, `${what}, after the kill`);
  const rerun = await runWorker({ root: location, ...(s3 ? { s3 } : {}) });
  expect(rerun.code, rerun.stderr).toBe(0);
  console.log(`[expire-kill] ${what}: first run ${first.signal ?? `exit ${first.code}`}; rerun ${rerun.stdout.trim()}`);
  const ids = await verify(io, location, expected, latest, `${what}, after the rerun`);
  expect(ids).toEqual(Array.from({ length: RETAIN }, (_, i) => latest - RETAIN + 1 + i));
  const paths = new TablePaths(location);
  expect(new TextDecoder().decode(await io.read(paths.earliestHint)).trim()).toBe(String(latest - RETAIN + 1));
}

describe('SIGKILL during snapshot expiration, then a rerun', () => {
  it('local disk: crash points after random numbers of deletions and kills at random times leave a consistent table', async () => {
    const io = new LocalFileIO();
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-expire-kill-'));
    dirs.push(dir);
    const { location: template, expected, latest } = await builtTable(io, join(dir, 'template'));
    const plan = await expireSnapshots(
      { fileIO: io, paths: new TablePaths(template) },
      { retainMin: RETAIN, expireLimit: 10_000, olderThanMs: Date.now() + 60_000, dryRun: true },
    );
    const total = plan.filesDeleted;
    expect(total).toBeGreaterThan(40);
    const kills: Array<{ crashAfterDeletes?: number; killAfterMs?: number }> = [
      { crashAfterDeletes: 1 },
      { crashAfterDeletes: total - 1 },
      ...Array.from({ length: 4 }, () => ({ crashAfterDeletes: 1 + Math.floor(Math.random() * (total - 1)) })),
      ...Array.from({ length: 3 }, () => ({ killAfterMs: 20 + Math.floor(Math.random() * 280) })),
    ];
    for (const [i, kill] of kills.entries()) await killAndRerun(io, await trialTable(dir, i), expected, latest, kill);
  }, 300_000);

  itOnS3Warehouse(
    'expiration kill test on S3',
    'S3: a crash point in the middle, then a rerun, leaves a consistent table',
    'expire-kill',
    async (io, warehouse, options) => {
      const { location, expected, latest } = await builtTable(io, warehouse);
      const plan = await expireSnapshots(
        { fileIO: io, paths: new TablePaths(location) },
        { retainMin: RETAIN, expireLimit: 10_000, olderThanMs: Date.now() + 60_000, dryRun: true },
      );
      await killAndRerun(
        io,
        location,
        expected,
        latest,
        { crashAfterDeletes: 1 + Math.floor(Math.random() * (plan.filesDeleted - 1)) },
        options,
      );
    },
    600_000,
  );
});

/** Every snapshot file id in `snapshot/`, leftovers below EARLIEST included, ascending. */
async function allSnapshotFiles(io: FileIO, paths: TablePaths): Promise<number[]> {
  const ids: number[] = [];
  for await (const id of new SnapshotManager(io, paths).listIds()) ids.push(id);
  return ids.sort((a, b) => a - b);
}

/**
 * Kills the expiration inside batch `batch` of its snapshot-file deletions (batches of
 * `batchSize`: all but the batch's newest file go in one deleteMany, of which a random subset is
 * deleted before the SIGKILL), then checks what readers and writers see and that a rerun deletes
 * the leftovers. The table has 30 snapshots, 25 of which expire.
 */
async function cutSnapshotBatch(
  io: FileIO,
  location: string,
  expected: Expected,
  latest: number,
  cutAt: { batchSize: number; batch: number },
  s3?: S3Options,
): Promise<void> {
  const paths = new TablePaths(location);
  const firstRetained = latest - RETAIN + 1;
  const { batchSize, batch } = cutAt;
  const start = (batch - 1) * batchSize + 1;
  const hint = Math.min(start + batchSize, firstRetained);
  const first = await runWorker({ root: location, snapshotBatchSize: batchSize, crashInSnapshotBatch: batch, ...(s3 ? { s3 } : {}) });
  expect(first.signal, first.stderr).toBe('SIGKILL');
  const cut = (JSON.parse(/cut: (.*)/.exec(first.stderr)![1]!) as string[]).map((p) => Number(/snapshot-(\d+)$/.exec(p)![1]));
  // The earlier batches are gone; EARLIEST already names the successor of the cut batch.
  expect(new TextDecoder().decode(await io.read(paths.earliestHint)).trim()).toBe(String(hint));
  const files = await allSnapshotFiles(io, paths);
  const leftovers = files.filter((id) => id < hint);
  const batchIds = Array.from({ length: hint - start }, (_, i) => start + i);
  expect(leftovers).toEqual(batchIds.filter((id) => !cut.includes(id)));
  // The batch's newest file goes alone after the rest, so it is always left: the next run's cue.
  expect(leftovers).toContain(hint - 1);
  // The chain readers and writers see starts at EARLIEST and has no gap; leftovers are invisible.
  const sm = new SnapshotManager(io, paths);
  expect(await sm.earliestId()).toBe(hint);
  expect(await sm.sortedIds()).toEqual(Array.from({ length: latest - hint + 1 }, (_, i) => hint + i));
  await verify(io, location, expected, latest, `cut snapshot batch ${batch} (${cut.length} deleted), after the kill`);
  const table = await openTable(location, { fileIO: io });
  await expect(table.newRead({ snapshotId: leftovers[0]! }).toArrowTable()).rejects.toBeInstanceOf(SnapshotNotFoundError);
  await expect(createTag(io, paths, 'on-a-leftover', { snapshotId: leftovers[0]! })).rejects.toBeInstanceOf(SnapshotNotFoundError);
  const problems = (await verifyTable(table)).problems.filter((p) => p.snapshotId === null);
  expect(problems, 'verify: chain and hints').toEqual([]);
  if (hint === firstRetained) {
    // Only retained snapshots in the chain: orphan cleanup skips the leftovers (their manifests
    // are gone) and deletes nothing live. (Earlier in the run, expiring snapshots whose files
    // are already gone are still in the chain, and orphan cleanup refuses to guess until a rerun.)
    const orphans = await removeOrphanFiles({ fileIO: io, paths }, { olderThanMs: Date.now() });
    expect(orphans.filesDeleted, 'orphan cleanup right after the kill').toBe(0);
    await verify(io, location, expected, latest, 'cut snapshot batch, after orphan cleanup');
  }

  const rerun = await runWorker({ root: location, snapshotBatchSize: batchSize, ...(s3 ? { s3 } : {}) });
  expect(rerun.code, rerun.stderr).toBe(0);
  const summary = JSON.parse(rerun.stdout) as { filesDeleted: number; snapshotsExpired: number };
  console.log(
    `[expire-kill] cut snapshot batch ${batch}: ${cut.length} of ${batchIds.length - 1} deleted before the kill; ` +
      `rerun ${rerun.stdout.trim()}`,
  );
  expect(await allSnapshotFiles(io, paths)).toEqual(Array.from({ length: RETAIN }, (_, i) => firstRetained + i));
  expect(new TextDecoder().decode(await io.read(paths.earliestHint)).trim()).toBe(String(firstRetained));
  // The rerun deleted the leftovers and expired hint..firstRetained-1.
  expect(summary.snapshotsExpired).toBe(firstRetained - hint);
  expect(summary.filesDeleted).toBeGreaterThanOrEqual(leftovers.length + summary.snapshotsExpired);
  await verify(io, location, expected, latest, 'cut snapshot batch, after the rerun');
  const after = await removeOrphanFiles({ fileIO: io, paths }, { olderThanMs: Date.now() });
  expect(after.filesDeleted, 'orphan cleanup after the rerun').toBe(0);
}

describe('SIGKILL inside a batch of snapshot-file deletions, then a rerun', () => {
  it('local disk: leftovers below EARLIEST are invisible, the chain has no gap, and the rerun deletes them', async () => {
    const io = new LocalFileIO();
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-expire-batch-kill-'));
    dirs.push(dir);
    const { expected, latest } = await builtTable(io, join(dir, 'template'));
    // In the middle of the run (expiring snapshots after the batch are still in the chain), and
    // in its last batch (only retained snapshots are left in the chain).
    for (const [i, cutAt] of [
      { batchSize: 8, batch: 2 },
      { batchSize: 5, batch: 5 },
    ].entries())
      await cutSnapshotBatch(io, await trialTable(dir, i), expected, latest, cutAt);
  }, 300_000);

  itOnS3Warehouse(
    'expiration batch kill test on S3',
    'S3: the same on the S3 server (last batch cut)',
    'expire-batch-kill',
    async (io, warehouse, options) => {
      const { location, expected, latest } = await builtTable(io, warehouse);
      await cutSnapshotBatch(io, location, expected, latest, { batchSize: 5, batch: 5 }, options);
    },
    600_000,
  );
});

/** Every file the changelog of `c` references: its list, manifests and changelog data files. */
async function changelogFiles(io: FileIO, paths: TablePaths, c: Snapshot): Promise<string[]> {
  if (!c.changelogManifestList) return [];
  const locator = new DataFileLocator(paths, await new SchemaManager(io, paths).latest());
  const out = [paths.manifestPath(c.changelogManifestList)];
  for (const m of await readManifestList(io, paths.manifestPath(c.changelogManifestList))) {
    out.push(paths.manifestPath(m.fileName));
    for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) out.push(locator.dataFile(e));
  }
  return out;
}

async function changelogIds(io: FileIO, paths: TablePaths): Promise<number[]> {
  const ids: number[] = [];
  for await (const id of new ChangelogManager(io, paths).listIds()) ids.push(id);
  return ids.sort((a, b) => a - b);
}

/**
 * A primary-key table whose changelog outlives its snapshots: `commits` commits, each one's own
 * expiration keeps one snapshot and moves the expired snapshot to changelog/ (changelogs
 * 1..commits-1, retained for a day).
 */
async function buildChangelogTable(io: FileIO, warehouse: string, commits: number): Promise<string> {
  const catalog = new FileSystemCatalog(warehouse, { fileIO: io });
  await catalog.createTable('db.c', {
    fields: columns('k INT NOT NULL', 'v STRING'),
    primaryKeys: ['k'],
    options: {
      bucket: '1',
      'changelog-producer': 'input',
      'num-sorted-run.compaction-trigger': '100',
      'snapshot.num-retained.min': '1',
      'snapshot.num-retained.max': '1',
      'changelog.num-retained.max': '1000',
      'changelog.time-retained': '1 d',
    },
  });
  const location = catalog.tableLocation('db.c');
  const table = await openTable(location, { fileIO: io });
  for (let c = 1; c <= commits; c++) expect((await table.append([{ k: c % 4, v: `v${c}` }])).status).toBe('committed');
  return location;
}

/**
 * Kills changelog expiration inside its `batch`-th batch of changelog metadata deletions (a random
 * part of the batch deleted), then checks what readers see and that a rerun finishes the job.
 * Changelogs 1..commits-1 all expire two days later; batches of `batchSize`.
 */
async function cutChangelogBatch(
  io: FileIO,
  location: string,
  commits: number,
  cutAt: { batchSize: number; batch: number },
  s3?: S3Options,
) {
  const paths = new TablePaths(location);
  const manager = new ChangelogManager(io, paths);
  const last = commits - 1;
  expect(await changelogIds(io, paths)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
  const files = new Map<number, string[]>();
  for (let id = 1; id <= last; id++) files.set(id, await changelogFiles(io, paths, (await manager.tryGet(id))!));
  const exist = async (ps: readonly string[]): Promise<boolean[]> => Promise.all(ps.map((p) => io.exists(p)));
  const { batchSize, batch } = cutAt;
  const start = (batch - 1) * batchSize + 1;
  const hint = start + batchSize;
  expect(hint, 'the cut batch is not the last one').toBeLessThanOrEqual(last);
  const later = 2 * 86_400_000;
  const first = await runWorker({
    root: location,
    snapshotBatchSize: batchSize,
    crashInChangelogBatch: batch,
    nowOffsetMs: later,
    retainMin: 1,
    ...(s3 ? { s3 } : {}),
  });
  expect(first.signal, first.stderr).toBe('SIGKILL');
  const cut = (JSON.parse(/cut: (.*)/.exec(first.stderr)![1]!) as string[]).map((p) => Number(/changelog-(\d+)$/.exec(p)![1]));
  // Every changelog file, manifest and list went before the metadata batches; the earlier batches
  // are gone and EARLIEST names the successor of the cut batch.
  for (const [id, fs] of files) expect(await exist(fs), `files of changelog ${id}`).toEqual(fs.map(() => false));
  expect(new TextDecoder().decode(await io.read(paths.changelogEarliestHint)).trim()).toBe(String(hint));
  const ids = await changelogIds(io, paths);
  const leftovers = ids.filter((id) => id < hint);
  const batchIds = Array.from({ length: batchSize }, (_, i) => start + i);
  expect(leftovers).toEqual(batchIds.filter((id) => !cut.includes(id)));
  expect(leftovers).toContain(hint - 1); // the batch's newest goes last, alone
  // Readers see a chain from EARLIEST on without a gap; the leftovers are invisible to them.
  expect(await manager.earliestId()).toBe(hint);
  expect(ids.filter((id) => id >= hint)).toEqual(Array.from({ length: last - hint + 1 }, (_, i) => hint + i));
  const table = await openTable(location, { fileIO: io });
  // Verify walks the same chain (the changelogs' files are gone already, as an expired snapshot's
  // are from the first deletion on; only the chain is checked here).
  const verified = await verifyTable(table, { all: true, metadataOnly: true });
  expect(verified.problems.filter((p) => /changelog ids|EARLIEST|hint/i.test(p.problem))).toEqual([]);
  expect(verified.changelogsChecked).toEqual(Array.from({ length: last - hint + 1 }, (_, i) => hint + i));

  const rerun = await runWorker({ root: location, snapshotBatchSize: batchSize, nowOffsetMs: later, retainMin: 1, ...(s3 ? { s3 } : {}) });
  expect(rerun.code, rerun.stderr).toBe(0);
  const summary = JSON.parse(rerun.stdout) as { filesDeleted: number; changelogsExpired: number };
  console.log(
    `[expire-kill] cut changelog batch ${batch}: ${cut.length} of ${batchSize - 1} deleted before the kill; rerun ${rerun.stdout.trim()}`,
  );
  // The rerun deleted the leftovers and expired hint..last.
  expect(summary.changelogsExpired).toBe(last - hint + 1);
  expect(summary.filesDeleted).toBeGreaterThanOrEqual(leftovers.length + summary.changelogsExpired);
  expect(await changelogIds(io, paths)).toEqual([]);
  expect(await manager.earliestId()).toBeNull();
  // The retained snapshot still reads.
  const latest = (await new SnapshotManager(io, paths).latestId())!;
  expect(latest).toBe(commits);
  const rows = (await table.newRead().toArrowTable()).toArray().map((r) => (r.toJSON() as { k: number }).k);
  expect(rows.sort()).toEqual([0, 1, 2, 3]);
}

describe('SIGKILL inside a batch of changelog-file deletions, then a rerun', () => {
  it('local disk: leftovers below the changelog EARLIEST are invisible, the chain has no gap, and the rerun deletes them', async () => {
    const io = new LocalFileIO();
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-changelog-batch-kill-'));
    dirs.push(dir);
    const location = await buildChangelogTable(io, join(dir, 'wh'), 16);
    await cutChangelogBatch(io, location, 16, { batchSize: 4, batch: 2 });
  }, 300_000);

  itOnS3Warehouse(
    'changelog batch kill test on S3',
    'S3: the same on the S3 server',
    'changelog-batch-kill',
    async (io, warehouse, options) => {
      const location = await buildChangelogTable(io, warehouse, 10);
      await cutChangelogBatch(io, location, 10, { batchSize: 3, batch: 2 }, options);
    },
    600_000,
  );
});
