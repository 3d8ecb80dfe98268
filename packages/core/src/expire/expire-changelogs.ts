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
 * changelogs, their changelog manifests and manifest lists (each kind one batched `deleteMany`),
 * the changelog metadata files in batches, oldest batch first, each after EARLIEST was moved past
 * it, then the EARLIEST hint. A changelog whose snapshot is tagged keeps its files (the tag names
 * them).
 *
 * The steps, each a function below: settings, leftovers of an interrupted run, the range bounds,
 * the read of the expiring changelogs, their files and manifests, their metadata files in batches.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type Snapshot } from '@tidemark/format';
import { OtherBranches } from '../branch/other-branches.js';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import type { TablePaths } from '../table-paths.js';
import { METADATA_READ_CONCURRENCY, idRange, mapOrdered, rampingWindow } from './bounded-map.js';
import { changelogExpireSettings, type ExpireChangelogsOptions, type RetentionSettings } from './expire-settings.js';
import { FileDeleter, type FileRef } from './file-deleter.js';
import {
  DataFileLocator,
  checkAborted,
  latestSchema,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceSummary,
} from './table-files.js';

export { changelogDecoupled, type ExpireChangelogsOptions } from './expire-settings.js';

/** Result of {@link expireChangelogs}. */
export interface ExpireChangelogsSummary extends MaintenanceSummary {
  readonly changelogsExpired: number;
  /** Earliest long-lived changelog after the run, or null when none is left. */
  readonly earliestChangelogId: number | null;
}

/** What the steps of one changelog expiration share. */
interface ChangelogRun {
  readonly io: FileIO;
  readonly paths: TablePaths;
  readonly settings: RetentionSettings;
  readonly changelogs: ChangelogManager;
  readonly deleter: FileDeleter;
  readonly signal: AbortSignal | undefined;
  readonly summary: (changelogsExpired: number, earliestChangelogId: number | null) => ExpireChangelogsSummary;
}

/**
 * Expires long-lived changelogs of `table` and deletes their changelog files and manifests.
 *
 * @throws MaintenanceArgumentError for invalid retain counts.
 */
export async function expireChangelogs(table: MaintainedTable, options: ExpireChangelogsOptions = {}): Promise<ExpireChangelogsSummary> {
  const started = Date.now();
  const now = (options.now ?? Date.now)();
  const schema = await latestSchema(table);
  const run = startRun(table, options, changelogExpireSettings(options, tableOptions(schema), now), started);

  const { id: earliest, leftoversBelow } = await run.changelogs.earliestProbe();
  if (earliest === null) return run.summary(0, null);
  if (leftoversBelow) await deleteLeftoverChangelogs(run, earliest);
  const latest = (await run.changelogs.latestId())!;
  const bounds = await rangeBounds(run, earliest, latest);
  if (bounds === null) return run.summary(0, earliest);
  const { expiring, end } = await readExpiringChangelogs(run, bounds);
  if (end <= earliest) return run.summary(0, earliest);
  await deleteChangelogFiles(run, new DataFileLocator(run.paths, schema), expiring, end);
  await deleteChangelogMetadata(run, expiring, end, latest);
  return run.summary(expiring.length, end <= latest ? end : null);
}

function startRun(table: MaintainedTable, options: ExpireChangelogsOptions, settings: RetentionSettings, started: number): ChangelogRun {
  const io = table.fileIO;
  const dryRun = options.dryRun ?? false;
  // A dry run lists what it would delete (`listDeleted` is not consulted here); progress is not reported.
  const deleter = new FileDeleter(io, { dryRun, listDeleted: dryRun, signal: options.signal });
  return {
    io,
    paths: table.paths,
    settings,
    changelogs: new ChangelogManager(io, table.paths),
    deleter,
    signal: options.signal,
    summary: (changelogsExpired, earliestChangelogId) => ({ changelogsExpired, earliestChangelogId, ...deleter.summary(started) }),
  };
}

/**
 * Changelog files below a trusted EARLIEST are leftovers of a run killed inside a batch (see
 * {@link deleteChangelogMetadata}): what they referenced went before their batch started, so they
 * go first, in any order.
 */
async function deleteLeftoverChangelogs(run: ChangelogRun, earliest: number): Promise<void> {
  const { changelogs, paths } = run;
  await run.deleter.deleteAll(
    'leftover-changelogs',
    (async function* () {
      for await (const id of changelogs.leftoverIds(earliest)) yield { path: paths.changelogMetaPath(id), size: 0 };
    })(),
  );
}

/** Candidates `[earliest, maxExclusive)`; below `min` a changelog expires regardless of age. */
export interface ChangelogBounds {
  readonly earliest: number;
  readonly min: number;
  readonly maxExclusive: number;
}

/** Reads what bounds the range (the snapshots and the consumers); null when the table has no snapshots. */
async function rangeBounds(run: ChangelogRun, earliest: number, latest: number): Promise<ChangelogBounds | null> {
  const snapshots = new SnapshotManager(run.io, run.paths);
  const [latestSnapshot, earliestSnapshot] = await Promise.all([snapshots.latestId(), snapshots.earliestId()]);
  if (latestSnapshot === null) return null;
  const consumerMin = await new ConsumerManager(run.io, run.paths).minNextSnapshot();
  return changelogBounds({ earliest, latest, latestSnapshot, earliestSnapshot, consumerMin }, run.settings);
}

/**
 * Paimon's bounds of the changelogs that may expire. Counts include the snapshots: changelog n
 * is as old as snapshot n would be. None at or after the earliest snapshot, nor one a consumer
 * still needs, nor more than the expire limit.
 */
export function changelogBounds(
  a: { earliest: number; latest: number; latestSnapshot: number; earliestSnapshot: number | null; consumerMin: number | null },
  s: Pick<RetentionSettings, 'retainMin' | 'retainMax' | 'limit'>,
): ChangelogBounds {
  const min = Math.max(a.latestSnapshot - s.retainMax + 1, a.earliest);
  let maxExclusive = Math.min(a.latestSnapshot - s.retainMin + 1, a.latest + 1, a.earliest + s.limit);
  if (a.earliestSnapshot !== null) maxExclusive = Math.min(maxExclusive, a.earliestSnapshot);
  if (a.consumerMin !== null) maxExclusive = Math.min(maxExclusive, a.consumerMin);
  return { earliest: a.earliest, min, maxExclusive };
}

/**
 * The changelogs that expire (those still there) and the first one kept (`end`). They are read
 * with bounded concurrency, in a window that widens while they keep expiring, and folded in id
 * order: the range ends at the first one too young.
 */
async function readExpiringChangelogs(run: ChangelogRun, b: ChangelogBounds): Promise<{ expiring: Snapshot[]; end: number }> {
  let end = b.maxExclusive;
  const expiring: Snapshot[] = [];
  for await (const { id, c } of mapOrdered(idRange(b.earliest, b.maxExclusive), rampingWindow(METADATA_READ_CONCURRENCY), async (id) => {
    checkAborted(run.signal);
    return { id, c: await run.changelogs.tryGet(id) };
  })) {
    if (id >= b.min && c !== null && c.timeMillis >= run.settings.olderThan) {
      end = id;
      break;
    }
    if (c !== null) expiring.push(c);
  }
  return { expiring, end };
}

/**
 * Steps 1 and 2: the changelog files, streamed into one batched deletion while the manifests are
 * read, then their manifests and manifest lists (names bounded by the expire limit, as the
 * changelogs). A changelog whose snapshot is tagged keeps its files.
 */
async function deleteChangelogFiles(
  run: ChangelogRun,
  locator: DataFileLocator,
  expiring: readonly Snapshot[],
  end: number,
): Promise<void> {
  const { io, paths } = run;
  const tagged = new Set((await new TagManager(io, paths).list()).map((t) => t.tag.id));
  const manifests: FileRef[] = [];
  const lists: FileRef[] = [];
  const readFiles = async (c: Snapshot): Promise<FileRef[]> => {
    checkAborted(run.signal);
    const list = await tryReadManifestList(io, paths, c.changelogManifestList);
    if (list === null) return []; // removed by an interrupted earlier run
    const files: FileRef[] = [];
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
    lists.push({ path: paths.manifestPath(c.changelogManifestList!), size: c.changelogManifestListSize ?? 0 });
    return files;
  };
  const withFiles = expiring.filter((c) => !!c.changelogManifestList && !tagged.has(c.id));
  const read = (async function* () {
    for await (const files of mapOrdered(withFiles, METADATA_READ_CONCURRENCY, readFiles)) yield* files;
  })();
  // Another branch made from (or fast-forwarded to) one of these snapshots names the same files:
  // then the files (bounded by the expire limit) are collected and tested against it first.
  const others = await OtherBranches.read(io, paths, end - 1, run.signal);
  if (others === null) await run.deleter.deleteAll('changelog-files', read);
  else {
    const files: FileRef[] = [];
    for await (const f of read) files.push(f);
    await run.deleter.deleteAll('changelog-files', await others.unused(files, locator, run.signal));
  }
  const used = others === null ? null : await others.metadataNames(run.signal);
  const unusedMetadata = (refs: FileRef[]): FileRef[] =>
    used === null ? refs : refs.filter((f) => !used.has(f.path.slice(f.path.lastIndexOf('/') + 1)));
  await run.deleter.deleteAll('changelog-manifests', unusedMetadata(manifests));
  await run.deleter.deleteAll('changelog-manifest-lists', unusedMetadata(lists));
}

/** One batch of changelog metadata files, and the id EARLIEST moves to before it goes. */
export interface ChangelogBatch {
  readonly changelogs: readonly Snapshot[];
  readonly hintId: number;
  /**
   * The hint cannot name a changelog that exists (the whole changelog expires): the batch goes
   * one file at a time, oldest first, as readers then find the earliest changelog by listing.
   */
  readonly oneByOne: boolean;
}

/** Splits the expiring changelogs into batches of `batchSize`, oldest first. */
export function* changelogBatches(
  expiring: readonly Snapshot[],
  end: number,
  latest: number,
  batchSize: number,
): Generator<ChangelogBatch> {
  for (let from = 0; from < expiring.length; from += batchSize) {
    const hintId = expiring[from + batchSize]?.id ?? end;
    yield { changelogs: expiring.slice(from, from + batchSize), hintId, oneByOne: hintId > latest };
  }
}

/**
 * Steps 3 and 4: the changelog metadata, in batches, oldest batch first, then the EARLIEST hint.
 * EARLIEST is moved past a batch before the batch is deleted (one DeleteObjects request has no
 * order), so a kill leaves a contiguous range from EARLIEST on and leftovers below it, which the
 * next run deletes; the batch's newest file goes last, alone, so that "changelog EARLIEST-1
 * exists" tells the next run that a batch was cut short.
 */
async function deleteChangelogMetadata(run: ChangelogRun, expiring: readonly Snapshot[], end: number, latest: number): Promise<void> {
  const { io, paths, changelogs, deleter } = run;
  for (const batch of changelogBatches(expiring, end, latest, run.settings.batchSize)) {
    checkAborted(run.signal);
    const batchPaths = batch.changelogs.map((c) => paths.changelogMetaPath(c.id));
    deleter.record(batchPaths);
    if (deleter.dryRun) continue;
    if (batch.oneByOne) {
      for (const c of batch.changelogs) {
        checkAborted(run.signal);
        await changelogs.delete(c.id);
      }
      continue;
    }
    await changelogs.writeEarliestHint(batch.hintId);
    const last = batchPaths.pop()!;
    if (batchPaths.length > 0) await io.deleteMany(batchPaths);
    await io.delete(last);
  }
  // EARLIEST hint (already `end` after a batch that named it).
  if (!deleter.dryRun) await changelogs.writeEarliestHint(end);
}
