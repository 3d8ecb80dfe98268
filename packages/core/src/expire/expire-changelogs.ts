/**
 * Expiration of long-lived changelogs (`changelog/changelog-<id>`, kept by snapshot expiration
 * when the changelog is retained longer than the snapshots), with Paimon's rules: changelogs
 * beyond `changelog.num-retained.max` (counted with the snapshots, from the latest snapshot) go;
 * from there on only those older than `changelog.time-retained`; never the last
 * `changelog.num-retained.min`, nor one a live consumer still needs, nor more than
 * `snapshot.expire.limit` per run. Unset changelog settings fall back to the snapshot ones.
 *
 * Order of deletions, as for snapshots, so that a run killed at any point leaves every retained
 * changelog readable and a rerun finishes the job: the changelog files of the expiring
 * changelogs, their changelog manifests and manifest lists, the changelog metadata files oldest
 * first and one at a time, then the EARLIEST hint. A changelog whose snapshot is tagged keeps its
 * files (the tag names them).
 */
import { NotFoundError } from '@tidemark/storage';
import { readManifestEntries, type Snapshot } from '@tidemark/format';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import { MaintenanceArgumentError } from './maintenance-errors.js';
import {
  DataFileLocator,
  checkAborted,
  latestSchema,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from './table-files.js';

/** Options of {@link expireChangelogs}; unset values come from the table options. */
export interface ExpireChangelogsOptions extends MaintenanceRunOptions {
  /** `changelog.num-retained.min` (default: the snapshot setting). */
  readonly retainMin?: number;
  /** `changelog.num-retained.max` (default: the snapshot setting). */
  readonly retainMax?: number;
  /** Epoch millis: changelogs committed before it may go. Default `now − changelog.time-retained`. */
  readonly olderThanMs?: number;
  /** At most this many changelogs per run (`snapshot.expire.limit`). */
  readonly expireLimit?: number;
}

/** Result of {@link expireChangelogs}. */
export interface ExpireChangelogsSummary extends MaintenanceSummary {
  readonly changelogsExpired: number;
  /** Earliest long-lived changelog after the run, or null when none is left. */
  readonly earliestChangelogId: number | null;
}

/**
 * Whether the changelog of a table outlives its snapshots: it has a changelog producer and a
 * `changelog.*` retention above the snapshot one (Java's `isChangelogDecoupled`).
 */
export function changelogDecoupled(o: ReturnType<typeof tableOptions>): boolean {
  if (o.changelogProducer === 'none') return false;
  const min = o.changelogNumRetainedMin;
  const max = o.changelogNumRetainedMax;
  const time = o.changelogTimeRetainedMs;
  return (
    (max !== null && max > o.snapshotNumRetainedMax) ||
    (min !== null && min > o.snapshotNumRetainedMin) ||
    (time !== null && time > o.snapshotTimeRetainedMs)
  );
}

/**
 * Expires long-lived changelogs of `table` and deletes their changelog files and manifests.
 *
 * @throws MaintenanceArgumentError for invalid retain counts.
 */
export async function expireChangelogs(table: MaintainedTable, options: ExpireChangelogsOptions = {}): Promise<ExpireChangelogsSummary> {
  const started = Date.now();
  const now = (options.now ?? Date.now)();
  const io = table.fileIO;
  const paths = table.paths;
  const schema = await latestSchema(table);
  const o = tableOptions(schema);
  const retainMin = options.retainMin ?? o.changelogNumRetainedMin ?? o.snapshotNumRetainedMin;
  const retainMax = options.retainMax ?? o.changelogNumRetainedMax ?? o.snapshotNumRetainedMax;
  const limit = options.expireLimit ?? o.snapshotExpireLimit;
  const olderThan = options.olderThanMs ?? now - (o.changelogTimeRetainedMs ?? o.snapshotTimeRetainedMs);
  if (!Number.isInteger(retainMin) || retainMin < 1) {
    throw new MaintenanceArgumentError(`changelog.num-retained.min must be an integer >= 1, got ${retainMin}`);
  }
  if (!Number.isInteger(retainMax) || retainMax < retainMin) {
    throw new MaintenanceArgumentError(
      `changelog.num-retained.max must be an integer >= changelog.num-retained.min (${retainMin}), got ${retainMax}`,
    );
  }
  const dryRun = options.dryRun ?? false;
  const deleted: string[] = [];
  let filesDeleted = 0;
  let bytesFreed = 0;
  const changelogs = new ChangelogManager(io, paths);
  const summary = (changelogsExpired: number, earliestChangelogId: number | null): ExpireChangelogsSummary => ({
    changelogsExpired,
    earliestChangelogId,
    filesDeleted,
    bytesFreed,
    durationMs: Date.now() - started,
    dryRun,
    ...(dryRun ? { deleted } : {}),
  });

  const earliest = await changelogs.earliestId();
  if (earliest === null) return summary(0, null);
  const latest = (await changelogs.latestId())!;
  const snapshots = new SnapshotManager(io, paths);
  const [latestSnapshot, earliestSnapshot] = await Promise.all([snapshots.latestId(), snapshots.earliestId()]);
  if (latestSnapshot === null) return summary(0, earliest);

  // Counts include the snapshots: changelog n is as old as snapshot n would be.
  const min = Math.max(latestSnapshot - retainMax + 1, earliest);
  let maxExclusive = Math.min(latestSnapshot - retainMin + 1, latest + 1, earliest + limit);
  if (earliestSnapshot !== null) maxExclusive = Math.min(maxExclusive, earliestSnapshot);
  const consumerMin = await new ConsumerManager(io, paths).minNextSnapshot();
  if (consumerMin !== null) maxExclusive = Math.min(maxExclusive, consumerMin);
  let end = maxExclusive;
  for (let id = min; id < maxExclusive; id++) {
    const c = await changelogs.tryGet(id);
    if (c !== null && c.timeMillis >= olderThan) {
      end = id;
      break;
    }
  }
  if (end <= earliest) return summary(0, earliest);

  const expiring: Snapshot[] = [];
  for (let id = earliest; id < end; id++) {
    checkAborted(options.signal);
    const c = await changelogs.tryGet(id);
    if (c !== null) expiring.push(c);
  }
  const tagged = new Set((await new TagManager(io, paths).list()).map((t) => t.tag.id));
  const locator = new DataFileLocator(paths, schema);
  const remove = async (files: ReadonlyArray<{ path: string; size: number }>): Promise<void> => {
    if (files.length === 0) return;
    checkAborted(options.signal);
    for (const f of files) {
      if (dryRun) deleted.push(f.path);
      filesDeleted++;
      bytesFreed += f.size;
    }
    if (!dryRun) await io.deleteMany(files.map((f) => f.path));
  };

  // 1. Changelog files, 2. their manifests and manifest lists.
  const manifests: Array<{ path: string; size: number }> = [];
  const lists: Array<{ path: string; size: number }> = [];
  for (const c of expiring) {
    if (!c.changelogManifestList || tagged.has(c.id)) continue;
    const list = await tryReadManifestList(io, paths, c.changelogManifestList);
    if (list === null) continue; // removed by an interrupted earlier run
    const files: Array<{ path: string; size: number }> = [];
    for (const m of list) {
      try {
        for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
          if (e.kind !== 'ADD') continue;
          files.push({ path: locator.dataFile(e), size: e.file.fileSize });
          for (const x of locator.extraFiles(e)) files.push({ path: x, size: 0 });
        }
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      manifests.push({ path: paths.manifestPath(m.fileName), size: m.fileSize });
    }
    await remove(files);
    lists.push({ path: paths.manifestPath(c.changelogManifestList), size: c.changelogManifestListSize ?? 0 });
  }
  await remove(manifests);
  await remove(lists);

  // 3. Changelog metadata, oldest first and one at a time (a partial run leaves a contiguous range).
  for (const c of expiring) {
    checkAborted(options.signal);
    const path = paths.changelogMetaPath(c.id);
    if (dryRun) deleted.push(path);
    else await changelogs.delete(c.id);
    filesDeleted++;
  }
  // 4. EARLIEST hint.
  if (!dryRun) await changelogs.writeEarliestHint(end);
  const left = end <= latest ? end : null;
  return summary(expiring.length, left);
}
