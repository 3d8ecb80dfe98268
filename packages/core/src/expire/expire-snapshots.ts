/**
 * Snapshot expiration with Java Paimon's semantics and defaults (docs/format.md, "Snapshot expiration").
 *
 * Order of deletions, chosen so that a run killed at any point leaves every retained snapshot and
 * every tag readable and a rerun finishes the job:
 * 1. data files deleted by the expiring snapshots (not live in the first retained snapshot nor in
 *    the newest tag before the deleting snapshot), plus their extra files;
 * 2. changelog files of the expired snapshots, unless the changelog outlives the snapshots (then
 *    step 4 keeps each snapshot as `changelog/changelog-<id>` first, its changelog manifests stay,
 *    and {@link expireChangelogs} removes them later; it runs at the end of every expiration);
 * 3. manifests and index files, then manifest lists and index manifests, that no retained
 *    snapshot or tag references;
 * 4. the snapshot files, in batches, oldest batch first; EARLIEST is moved past each batch before
 *    the batch is deleted, so a partial run leaves a contiguous chain from EARLIEST on, and at most
 *    some leftover snapshot files below it, which the next run deletes first;
 * 5. the EARLIEST hint (already there after the last batch).
 * Expired snapshots become unreadable from step 1 on, exactly as in Java; nothing retained ever
 * does. Missing files (already deleted by an earlier, interrupted run) are skipped.
 *
 * Each of these is a named step below (Paimon's `ExpireSnapshotsImpl` with `SnapshotDeletion`):
 * the settings (`expire-settings.ts`), the read pass that finds the expiring range and what it
 * references (`expiring-range.ts`), the deletion steps 1-3 (`snapshot-deletion.ts`), and steps 4
 * and 5 here. Every location comes from the table's {@link TablePaths}.
 *
 * Speed on object stores: all metadata of the range (snapshots, delta entries, manifest lists,
 * changelog entries, index manifests) is read in one pass, each file once, in a window of
 * {@link EXPIRE_READ_WINDOW} snapshots that widens as the range proves long (results are folded in
 * snapshot order, so the outcome is the same as a sequential read); deciding where the range ends
 * is part of that pass, not a pass of its own. Files of steps 1-3 are streamed into one
 * `deleteMany` per step (S3: 1,000 keys per request, a few requests in flight) and snapshot files
 * go in batches too, all without existence checks, since deleting a missing file is not an error
 * and sizes come from the manifests.
 *
 * Memory: manifests are streamed; only the DELETE entries, the changelog files, the metadata file
 * names and the snapshot objects of the expiring range (bounded by `snapshot.expire.limit`
 * commits), the results of at most {@link EXPIRE_READ_WINDOW} snapshots being read, and the
 * metadata file names of retained snapshots and tags are held, never the data files of the whole
 * table.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import type { Snapshot } from '@tidemark/format';
import { OtherBranches } from '../branch/other-branches.js';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { ConsumerError } from '../errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import type { TablePaths } from '../table-paths.js';
import { METADATA_READ_CONCURRENCY, mapOrdered } from './bounded-map.js';
import { expireChangelogs } from './expire-changelogs.js';
import { snapshotExpireSettings, type ExpireSnapshotsOptions, type SnapshotExpireSettings } from './expire-settings.js';
import { readExpiringRange, type ExpiringRange, type RangeBounds } from './expiring-range.js';
import { FileDeleter } from './file-deleter.js';
import { MaintenanceError } from './maintenance-errors.js';
import {
  deleteChangelogFiles,
  deleteDataFiles,
  deleteManifests,
  firstRetained,
  readRetainedMetadata,
  type DeletionContext,
  type NamedTag,
} from './snapshot-deletion.js';
import { DataFileLocator, checkAborted, latestSchema, type MaintainedTable, type MaintenanceSummary } from './table-files.js';

export type { ExpireSnapshotsOptions } from './expire-settings.js';

/** Result of {@link expireSnapshots}. */
export interface ExpireSnapshotsSummary extends MaintenanceSummary {
  readonly snapshotsExpired: number;
  /** Long-lived changelogs expired (`changelog/changelog-<id>`; their files are counted in `filesDeleted`). */
  readonly changelogsExpired: number;
  /** Earliest snapshot after the run (null for a table without snapshots). */
  readonly earliestSnapshotId: number | null;
}

/**
 * Expires old snapshots of `table` and deletes the files only they used.
 *
 * @throws MaintenanceArgumentError for invalid retain counts.
 * @throws MaintenanceError when a retained snapshot's or tag's metadata cannot be read (nothing
 *   unsafe is deleted then), or when deletions fail.
 */
export async function expireSnapshots(table: MaintainedTable, options: ExpireSnapshotsOptions = {}): Promise<ExpireSnapshotsSummary> {
  const result = await expireSnapshotFiles(table, options);
  // Long-lived changelogs next (also when the options no longer decouple: leftovers must go).
  // Tables without a producer never keep any: spare the commit path the look.
  if (tableOptions(await latestSchema(table)).changelogProducer === 'none') return result;
  const changelogs = await expireChangelogs(table, {
    ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
    ...(options.snapshotBatchSize !== undefined ? { batchSize: options.snapshotBatchSize } : {}),
  });
  if (changelogs.changelogsExpired === 0) return result;
  return {
    ...result,
    changelogsExpired: changelogs.changelogsExpired,
    filesDeleted: result.filesDeleted + changelogs.filesDeleted,
    bytesFreed: result.bytesFreed + changelogs.bytesFreed,
    ...(result.deleted !== undefined ? { deleted: [...result.deleted, ...(changelogs.deleted ?? [])] } : {}),
  };
}

/** What the steps of one snapshot expiration share (the data-file locator is made once something expires). */
interface ExpireRun extends Omit<DeletionContext, 'locator'> {
  readonly settings: SnapshotExpireSettings;
  readonly snapshots: SnapshotManager;
  /** The tags, listed once a snapshot is known to expire (a run that expires nothing skips them). */
  readonly tags: () => Promise<NamedTag[]>;
  /** The summary of the run so far, with the snapshots it expired and the earliest it leaves. */
  readonly summary: (snapshotsExpired: number, earliestSnapshotId: number | null) => ExpireSnapshotsSummary;
}

/** Snapshot expiration without the long-lived changelogs: the pipeline of the steps above. */
async function expireSnapshotFiles(table: MaintainedTable, options: ExpireSnapshotsOptions): Promise<ExpireSnapshotsSummary> {
  const now = (options.now ?? Date.now)();
  const started = Date.now();
  const schema = await latestSchema(table);
  const o = tableOptions(schema);
  const settings = snapshotExpireSettings(options, o, now);
  const run = startRun(table, options, settings, started);
  const { io, paths } = run;

  const [latestId, { id: earliestId, leftoversBelow }] = await Promise.all([run.snapshots.latestId(), run.snapshots.earliestProbe()]);
  if (latestId === null || earliestId === null) return run.summary(0, null);
  if (leftoversBelow) await deleteLeftoverSnapshots(run, earliestId);
  const consumerTtl = o.consumerExpirationTimeMs;
  const bounds = await rangeBounds(io, paths, {
    earliestId,
    latestId,
    settings,
    consumersStaleBefore: consumerTtl === null ? null : now - consumerTtl,
    dryRun: run.deleter.dryRun,
  });
  if (bounds === null) return keepEarliest(run, earliestId);

  const locator = new DataFileLocator(paths, schema);
  const range = await readExpiringRange(
    {
      ...run,
      locator,
      decoupled: settings.decoupled,
      olderThan: settings.olderThan,
      onProgress: (done, total) => run.deleter.progress('reading-deltas', done, total),
    },
    bounds,
  );
  if (range.end <= range.earliest) return keepEarliest(run, earliestId);
  firstRetained(paths, range); // before the tags are listed
  const tags = await run.tags();
  const own = await readRetainedMetadata(run, range, tags);
  // Other branches share the files of the snapshots they were made or fast-forwarded from.
  const others = await OtherBranches.read(io, paths, range.end, run.signal);
  const retained = others === null ? own : { ...own, names: new Set([...own.names, ...(await others.metadataNames(run.signal))]) };
  const ctx = { ...run, locator, others };
  await deleteDataFiles(ctx, range, retained, tags);
  await deleteChangelogFiles(ctx, range);
  await deleteManifests(ctx, range, retained);
  const expired = await deleteSnapshots(run, range);
  // 5. EARLIEST hint (already `end` when the last batch held a snapshot).
  if (!run.deleter.dryRun && expired.hinted !== range.end) await io.write(paths.earliestHint, String(range.end));
  return run.summary(expired.count, range.end); // a dry run reports the earliest snapshot the real run would leave
}

/** The shared state of a run: managers, the file deleter, the lazily listed tags and the summary. */
function startRun(table: MaintainedTable, options: ExpireSnapshotsOptions, settings: SnapshotExpireSettings, started: number): ExpireRun {
  const io = table.fileIO;
  const paths = table.paths;
  const dryRun = options.dryRun ?? false;
  const deleter = new FileDeleter(io, {
    dryRun,
    listDeleted: dryRun && options.listDeleted !== false,
    signal: options.signal,
    onProgress: options.onProgress,
  });
  let tagsRead: Promise<NamedTag[]> | null = null;
  return {
    io,
    paths,
    settings,
    deleter,
    signal: options.signal,
    snapshots: new SnapshotManager(io, paths),
    tags: () => (tagsRead ??= new TagManager(io, paths).list()),
    summary: (snapshotsExpired, earliestSnapshotId) => ({
      snapshotsExpired,
      changelogsExpired: 0,
      earliestSnapshotId,
      ...deleter.summary(started),
    }),
  };
}

/**
 * Snapshot files below a trusted EARLIEST, left by a run killed in the middle of a batch (step 4).
 * Everything they referenced was deleted before their batch started, and no reader sees them,
 * so they go in any order. A decoupled changelog was kept before its batch started too.
 */
async function deleteLeftoverSnapshots(run: ExpireRun, earliest: number): Promise<void> {
  const { snapshots, paths } = run;
  await run.deleter.deleteAll(
    'leftover-snapshots',
    (async function* () {
      for await (const id of snapshots.leftoverIds(earliest)) yield { path: paths.snapshotPath(id), size: 0 };
    })(),
  );
}

/** Ends a run that expires nothing, with the EARLIEST hint right. */
async function keepEarliest(run: ExpireRun, earliestId: number): Promise<ExpireSnapshotsSummary> {
  if (!run.deleter.dryRun) await ensureEarliestHint(run.io, run.paths, earliestId);
  return run.summary(0, earliestId);
}

/**
 * Bounds of Paimon's expiring range before the snapshots' times are looked at: snapshots below
 * `min` expire regardless of age (retainMax), none at or above `maxExclusive` does (retainMin,
 * the expire limit, consumers). Null when nothing can expire.
 */
async function rangeBounds(
  io: FileIO,
  paths: TablePaths,
  a: {
    earliestId: number;
    latestId: number;
    settings: Pick<SnapshotExpireSettings, 'retainMin' | 'retainMax' | 'limit'>;
    consumersStaleBefore: number | null;
    dryRun: boolean;
  },
): Promise<RangeBounds | null> {
  const consumerMin = await minConsumerSnapshot(io, paths, a.consumersStaleBefore, a.dryRun);
  return expiringBounds(a.earliestId, a.latestId, a.settings, consumerMin);
}

/**
 * {@link rangeBounds} once the smallest snapshot a live consumer still needs (`consumerMin`) is
 * known.
 */
export function expiringBounds(
  earliest: number,
  latest: number,
  s: Pick<SnapshotExpireSettings, 'retainMin' | 'retainMax' | 'limit'>,
  consumerMin: number | null,
): RangeBounds | null {
  const min = Math.max(latest - s.retainMax + 1, earliest);
  let maxExclusive = Math.min(latest - s.retainMin + 1, earliest + s.limit);
  if (consumerMin !== null) maxExclusive = Math.min(maxExclusive, consumerMin);
  return maxExclusive > earliest ? { earliest, min, maxExclusive } : null;
}

/**
 * Smallest `nextSnapshot` of the table's live consumers (`consumer/consumer-*`), or null. A
 * consumer last written before `staleBefore` no longer holds snapshots back
 * (`consumer.expiration-time`); outside a dry run its file is deleted, as Java's expiration does.
 */
async function minConsumerSnapshot(io: FileIO, paths: TablePaths, staleBefore: number | null, dryRun: boolean): Promise<number | null> {
  const consumers = new ConsumerManager(io, paths);
  let list;
  try {
    list = await consumers.list();
  } catch (e) {
    if (e instanceof ConsumerError) throw new MaintenanceError(`${e.message} before expiring snapshots`, { cause: e });
    throw e;
  }
  let min: number | null = null;
  for (const c of list) {
    if (staleBefore !== null && c.lastModified.getTime() < staleBefore) {
      if (!dryRun) await io.delete(consumers.consumerPath(c.id));
      continue;
    }
    if (min === null || c.nextSnapshot < min) min = c.nextSnapshot;
  }
  return min;
}

/** One batch of step 4: the snapshots of ids `[from, to)` still there, and the id EARLIEST moves to first. */
export interface SnapshotBatch {
  readonly snapshots: readonly Snapshot[];
  /** The first snapshot present at or after `to` (or `end`): the hint must name one that exists. */
  readonly hintId: number;
  readonly to: number;
}

/**
 * Splits the expiring snapshots into batches of `batchSize` ids, oldest first, skipping batches
 * whose snapshots are all gone. `expiring[i]` is snapshot `earliest + i` (null when gone).
 */
export function* snapshotBatches(
  expiring: ReadonlyArray<Snapshot | null>,
  earliest: number,
  end: number,
  batchSize: number,
): Generator<SnapshotBatch> {
  for (let from = earliest; from < end; from += batchSize) {
    const to = Math.min(from + batchSize, end);
    const snapshots: Snapshot[] = [];
    for (let id = from; id < to; id++) {
      const s = expiring[id - earliest];
      if (s !== null && s !== undefined) snapshots.push(s);
    }
    if (snapshots.length === 0) continue;
    let hintId = to;
    while (hintId < end && (expiring[hintId - earliest] ?? null) === null) hintId++;
    yield { snapshots, hintId, to };
  }
}

/**
 * Step 4: the snapshot files, in batches of `batchSize` ids, oldest batch first. One batch (a
 * DeleteObjects request) has no deletion order, so EARLIEST is moved past the batch before it is
 * deleted: readers and writers trust the hint while its snapshot exists, and whatever a kill leaves
 * of the batch sits below it (leftovers, deleted at the start of the next run). The batch's newest
 * file goes last, alone, so that "snapshot EARLIEST-1 exists" tells the next run, in one request,
 * that a batch was cut short. Only snapshots the read pass read are deleted (the others are already
 * gone); deleting a file that vanished meanwhile is not an error. A decoupled changelog is kept
 * (`changelog/changelog-<id>`) before its snapshot goes, so readers never miss both.
 *
 * Returns the snapshots expired and the last EARLIEST written (null when none was).
 */
async function deleteSnapshots(run: ExpireRun, range: ExpiringRange): Promise<{ count: number; hinted: number | null }> {
  const { io, paths, deleter, signal } = run;
  const { earliest, end } = range;
  const changelogs = new ChangelogManager(io, paths);
  let count = 0;
  let hinted: number | null = null;
  deleter.progress('snapshots', 0, end - earliest);
  for (const { snapshots, hintId, to } of snapshotBatches(range.expiring, earliest, end, run.settings.batchSize)) {
    checkAborted(signal);
    const batchPaths = snapshots.map((s) => paths.snapshotPath(s.id));
    deleter.record(batchPaths);
    if (!deleter.dryRun) {
      if (run.settings.decoupled) {
        for await (const _ of mapOrdered(snapshots, METADATA_READ_CONCURRENCY, (s) => changelogs.commit(s))) checkAborted(signal);
      }
      await io.write(paths.earliestHint, String(hintId));
      hinted = hintId;
      const last = batchPaths.pop()!;
      if (batchPaths.length > 0) await io.deleteMany(batchPaths);
      await io.delete(last);
    }
    count += snapshots.length;
    deleter.progress('snapshots', to - earliest, end - earliest);
  }
  deleter.progress('snapshots', end - earliest, end - earliest);
  return { count, hinted };
}

/** Writes EARLIEST when it is missing or wrong (nothing expired, but keep the hint right). */
async function ensureEarliestHint(io: FileIO, paths: TablePaths, earliest: number): Promise<void> {
  let current: string | null = null;
  try {
    current = new TextDecoder().decode(await io.read(paths.earliestHint)).trim();
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
  }
  if (current !== String(earliest)) await io.write(paths.earliestHint, String(earliest));
}
