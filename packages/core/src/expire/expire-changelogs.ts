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
 */
import { NotFoundError } from '@tidemark/storage';
import { readManifestEntries, type Snapshot } from '@tidemark/format';
import { OtherBranches } from '../branch/other-branches.js';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import { METADATA_READ_CONCURRENCY, idRange, mapOrdered, rampingWindow } from './bounded-map.js';
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
  /**
   * Changelog metadata files deleted per batch (default 1,000, one S3 DeleteObjects request). The
   * EARLIEST hint is written once per batch; a kill in the middle of a batch leaves at most this
   * many leftover files below it, which the next run deletes.
   */
  readonly batchSize?: number;
}

/** A file to delete, with its size as the metadata gives it. */
interface FileRef {
  readonly path: string;
  readonly size: number;
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
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new MaintenanceArgumentError(`batchSize must be an integer >= 1, got ${batchSize}`);
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

  const { id: earliest, leftoversBelow } = await changelogs.earliestProbe();
  if (earliest === null) return summary(0, null);
  /** Deletes (or, in a dry run, lists) a stream of files as one batched `deleteMany`. */
  const remove = async (files: Iterable<FileRef> | AsyncIterable<FileRef>): Promise<void> => {
    const counted = async function* (): AsyncGenerator<string> {
      for await (const f of files) {
        if (filesDeleted % 1000 === 0) checkAborted(options.signal);
        if (dryRun) deleted.push(f.path);
        filesDeleted++;
        bytesFreed += f.size;
        yield f.path;
      }
    };
    if (dryRun) for await (const _ of counted());
    else await io.deleteMany(counted());
  };
  // Changelog files below a trusted EARLIEST are leftovers of a run killed inside a batch (step 3):
  // what they referenced went before their batch started, so they go first, in any order.
  if (leftoversBelow) {
    await remove(
      (async function* () {
        for await (const id of changelogs.leftoverIds(earliest)) yield { path: paths.changelogMetaPath(id), size: 0 };
      })(),
    );
  }
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
  // The changelogs are read with bounded concurrency, in a window that widens while they keep
  // expiring, and folded in id order: the range ends at the first one too young.
  let end = maxExclusive;
  const expiring: Snapshot[] = [];
  for await (const { id, c } of mapOrdered(idRange(earliest, maxExclusive), rampingWindow(METADATA_READ_CONCURRENCY), async (id) => {
    checkAborted(options.signal);
    return { id, c: await changelogs.tryGet(id) };
  })) {
    if (id >= min && c !== null && c.timeMillis >= olderThan) {
      end = id;
      break;
    }
    if (c !== null) expiring.push(c);
  }
  if (end <= earliest) return summary(0, earliest);

  const tagged = new Set((await new TagManager(io, paths).list()).map((t) => t.tag.id));
  const locator = new DataFileLocator(paths, schema);

  // 1. Changelog files, streamed into one batched deletion while the manifests are read; 2. their
  //    manifests and manifest lists (names bounded by the expire limit, as the changelogs).
  const manifests: FileRef[] = [];
  const lists: FileRef[] = [];
  const readFiles = async (c: Snapshot): Promise<FileRef[]> => {
    checkAborted(options.signal);
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
  const others = await OtherBranches.read(io, paths, end - 1, options.signal);
  if (others === null) await remove(read);
  else {
    const files: FileRef[] = [];
    for await (const f of read) files.push(f);
    await remove(await others.unused(files, locator, options.signal));
  }
  const used = others === null ? null : await others.metadataNames(options.signal);
  const unusedMetadata = (refs: FileRef[]): FileRef[] =>
    used === null ? refs : refs.filter((f) => !used.has(f.path.slice(f.path.lastIndexOf('/') + 1)));
  await remove(unusedMetadata(manifests));
  await remove(unusedMetadata(lists));

  // 3. Changelog metadata, in batches of `batchSize`, oldest batch first. EARLIEST is moved past a
  //    batch before the batch is deleted (one DeleteObjects request has no order), so a kill leaves
  //    a contiguous range from EARLIEST on and leftovers below it, which the next run deletes; the
  //    batch's newest file goes last, alone, so that "changelog EARLIEST-1 exists" tells the next
  //    run that a batch was cut short. When the hint cannot name a changelog that exists (the whole
  //    changelog expires), the last batch goes one file at a time, oldest first, as readers then
  //    find the earliest changelog by listing.
  for (let from = 0; from < expiring.length; from += batchSize) {
    checkAborted(options.signal);
    const batch = expiring.slice(from, from + batchSize);
    const hintId = expiring[from + batchSize]?.id ?? end;
    const batchPaths = batch.map((c) => paths.changelogMetaPath(c.id));
    filesDeleted += batch.length;
    if (dryRun) {
      deleted.push(...batchPaths);
      continue;
    }
    if (hintId > latest) {
      for (const c of batch) {
        checkAborted(options.signal);
        await changelogs.delete(c.id);
      }
      continue;
    }
    await changelogs.writeEarliestHint(hintId);
    const last = batchPaths.pop()!;
    if (batchPaths.length > 0) await io.deleteMany(batchPaths);
    await io.delete(last);
  }
  // 4. EARLIEST hint (already `end` after a batch that named it).
  if (!dryRun) await changelogs.writeEarliestHint(end);
  const left = end <= latest ? end : null;
  return summary(expiring.length, left);
}
