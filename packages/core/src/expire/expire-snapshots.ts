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
 * Speed on object stores: metadata is read with bounded concurrency (results are folded in
 * snapshot order, so the outcome is the same as a sequential read), files of steps 1-3 are
 * streamed into one `deleteMany` per step (S3: 1,000 keys per request, a few requests in flight)
 * and snapshot files go in batches too, all without existence checks, since deleting a missing
 * file is not an error and sizes come from the manifests.
 *
 * Memory: manifests are streamed; only the DELETE entries and the snapshot objects of the
 * expiring range (bounded by `snapshot.expire.limit` commits), the entries of at most
 * {@link METADATA_READ_CONCURRENCY} snapshots being read, and the metadata file names of retained
 * snapshots and tags are held, never the data files of the whole table.
 */
import { NotFoundError, joinPath, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type ManifestFileMeta, type Snapshot, type Tag } from '@tidemark/format';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { ConsumerError } from '../errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import type { TablePaths } from '../table-paths.js';
import { METADATA_READ_CONCURRENCY, idRange, mapOrdered } from './bounded-map.js';
import { changelogDecoupled, expireChangelogs } from './expire-changelogs.js';
import { MaintenanceArgumentError, MaintenanceError } from './maintenance-errors.js';
import {
  DataFileLocator,
  checkAborted,
  latestSchema,
  manifestListNames,
  tryReadIndexManifest,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from './table-files.js';

/** Snapshot files deleted per batch by default: one DeleteObjects request on S3. */
const DEFAULT_SNAPSHOT_BATCH = 1000;

/** Options of {@link expireSnapshots}; unset values come from the table options. */
export interface ExpireSnapshotsOptions extends MaintenanceRunOptions {
  /** Keep at least this many snapshots (`snapshot.num-retained.min`, default 10; at least 1). */
  readonly retainMin?: number;
  /** Keep at most this many snapshots (`snapshot.num-retained.max`, default unlimited). */
  readonly retainMax?: number;
  /**
   * Epoch millis: snapshots are expired only when their successor was committed before this
   * time. Default `now − snapshot.time-retained` (1 h).
   */
  readonly olderThanMs?: number;
  /** Expire at most this many snapshots per run (`snapshot.expire.limit`, default 50). */
  readonly expireLimit?: number;
  /** Alias of {@link expireLimit}. */
  readonly maxDeletes?: number;
  /**
   * Snapshot files deleted per batch (default 1,000, one S3 DeleteObjects request). The EARLIEST
   * hint is written once per batch; a kill in the middle of a batch leaves at most this many
   * leftover snapshot files below it, which the next run deletes.
   */
  readonly snapshotBatchSize?: number;
}

/** Result of {@link expireSnapshots}. */
export interface ExpireSnapshotsSummary extends MaintenanceSummary {
  readonly snapshotsExpired: number;
  /** Long-lived changelogs expired (`changelog/changelog-<id>`; their files are counted in `filesDeleted`). */
  readonly changelogsExpired: number;
  /** Earliest snapshot after the run (null for a table without snapshots). */
  readonly earliestSnapshotId: number | null;
}

/** A delta manifest entry of an expiring snapshot, reduced to what step 1 needs. */
interface DeltaEntry {
  readonly add: boolean;
  readonly path: string;
  readonly extra: readonly string[];
  readonly size: number;
}

interface Marked {
  readonly path: string;
  readonly extra: readonly string[];
  readonly size: number;
  /** Snapshot whose delta deleted the file. */
  readonly deletedIn: number;
}

/** What a run decided to expire: snapshots `[earliest, end)`. */
interface ExpireRange {
  readonly earliest: number;
  readonly end: number;
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

async function expireSnapshotFiles(table: MaintainedTable, options: ExpireSnapshotsOptions): Promise<ExpireSnapshotsSummary> {
  const now = (options.now ?? Date.now)();
  const started = Date.now();
  const io = table.fileIO;
  const paths = table.paths;
  const schema = await latestSchema(table);
  const o = tableOptions(schema);
  let retainMin = options.retainMin ?? o.snapshotNumRetainedMin;
  let retainMax = options.retainMax ?? o.snapshotNumRetainedMax;
  const limit = options.expireLimit ?? options.maxDeletes ?? o.snapshotExpireLimit;
  let olderThan = options.olderThanMs ?? now - o.snapshotTimeRetainedMs;
  // A changelog retained longer than the snapshots outlives them in changelog/ (decoupled); a
  // shorter one, or the delta files of a table without producer, live and die with the snapshots,
  // so there the longer setting keeps the snapshots longer.
  const decoupled = changelogDecoupled(o);
  if (o.changelogProducer !== 'none' && !decoupled) {
    const clMin = o.changelogNumRetainedMin;
    const clMax = o.changelogNumRetainedMax;
    const clTime = o.changelogTimeRetainedMs;
    if (clMin !== null && clMin > retainMin) retainMin = clMin;
    if (clMax !== null && clMax > retainMax) retainMax = clMax;
    if (retainMax < retainMin) retainMax = retainMin;
    if (clTime !== null && now - clTime < olderThan) olderThan = now - clTime;
  }
  if (!Number.isInteger(retainMin) || retainMin < 1) {
    throw new MaintenanceArgumentError(`retainMin (snapshot.num-retained.min) must be an integer >= 1, got ${retainMin}`);
  }
  if (!Number.isInteger(retainMax) || retainMax < retainMin) {
    throw new MaintenanceArgumentError(
      `retainMax (snapshot.num-retained.max) must be an integer >= retainMin (${retainMin}), got ${retainMax}`,
    );
  }
  if (!Number.isInteger(limit) || limit < 1)
    throw new MaintenanceArgumentError(`expireLimit (snapshot.expire.limit) must be an integer >= 1, got ${limit}`);
  if (!Number.isFinite(olderThan)) throw new MaintenanceArgumentError(`olderThanMs must be epoch millis, got ${olderThan}`);
  const batchSize = options.snapshotBatchSize ?? DEFAULT_SNAPSHOT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new MaintenanceArgumentError(`snapshotBatchSize must be an integer >= 1, got ${batchSize}`);
  }

  const dryRun = options.dryRun ?? false;
  const listDeleted = dryRun && options.listDeleted !== false;
  const snapshots = new SnapshotManager(io, paths);
  const deletedList: string[] = [];
  let filesDeleted = 0;
  let bytesFreed = 0;
  const progress = (phase: string, done: number, total?: number): void =>
    options.onProgress?.({ phase, done, bytesFreed, ...(total !== undefined ? { total } : {}) });
  const summary = (snapshotsExpired: number, earliestSnapshotId: number | null): ExpireSnapshotsSummary => ({
    snapshotsExpired,
    changelogsExpired: 0,
    earliestSnapshotId,
    filesDeleted,
    bytesFreed,
    durationMs: Date.now() - started,
    dryRun,
    ...(listDeleted ? { deleted: deletedList } : {}),
  });

  /**
   * Deletes (or, in a dry run, lists) a stream of files; sizes are added to bytesFreed. The stream
   * goes to one `deleteMany`, which batches it (S3: several DeleteObjects requests in flight).
   */
  const deleteAll = async (
    phase: string,
    files: Iterable<{ path: string; size: number }> | AsyncIterable<{ path: string; size: number }>,
  ): Promise<void> => {
    let done = 0;
    const signal = options.signal;
    const counted = async function* (): AsyncGenerator<string> {
      for await (const f of files) {
        if (done % 1000 === 0) {
          checkAborted(signal);
          if (done > 0) progress(phase, done);
        }
        if (listDeleted) deletedList.push(f.path);
        filesDeleted++;
        bytesFreed += f.size;
        done++;
        yield f.path;
      }
    };
    if (dryRun) for await (const _ of counted());
    else await io.deleteMany(counted());
    progress(phase, done);
  };

  /**
   * Snapshot files below a trusted EARLIEST, left by a run killed in the middle of a batch (step 4).
   * Everything they referenced was deleted before their batch started, and no reader sees them,
   * so they go in any order. A decoupled changelog was kept before its batch started too.
   */
  const deleteLeftovers = async (sm: SnapshotManager, earliest: number): Promise<void> => {
    await deleteAll(
      'leftover-snapshots',
      (async function* () {
        for await (const id of sm.leftoverIds(earliest)) yield { path: paths.snapshotPath(id), size: 0 };
      })(),
    );
  };

  const [latestId, { id: earliestId, leftoversBelow }] = await Promise.all([snapshots.latestId(), snapshots.earliestProbe()]);
  if (latestId === null || earliestId === null) return summary(0, null);
  if (leftoversBelow) await deleteLeftovers(snapshots, earliestId);
  const consumerTtl = o.consumerExpirationTimeMs;
  const consumersStaleBefore = consumerTtl === null ? null : now - consumerTtl;
  const known = new Map<number, Snapshot>();
  const range = await computeRange(io, paths, snapshots, known, {
    earliestId,
    latestId,
    retainMin,
    retainMax,
    limit,
    olderThan,
    consumersStaleBefore,
    dryRun,
  });
  if (range === null) {
    if (!dryRun) await ensureEarliestHint(io, paths, earliestId);
    return summary(0, earliestId);
  }
  const { earliest, end } = range;
  const endSnapshot = known.get(end) ?? (await snapshots.tryGet(end));
  if (endSnapshot === null) {
    throw new MaintenanceError(
      `snapshot ${end} of ${paths.root}, the first one to retain, cannot be read; expiration stopped without deleting anything`,
    );
  }
  const tags = await new TagManager(io, paths).list();
  const locator = new DataFileLocator(paths, schema);

  // 1. Data files deleted by snapshots (earliest, end], folded in snapshot order so that a DELETE
  //    followed by an ADD of the same file (level upgrade) keeps it. Reads run with bounded
  //    concurrency; the snapshots themselves are kept (bounded by the expire limit, like `marked`)
  //    for steps 2-4.
  checkAborted(options.signal);
  const marked = new Map<string, Marked>();
  const deltaLists = new Map<string, ManifestFileMeta[]>();
  const expiring: Array<Snapshot | null> = new Array<Snapshot | null>(end - earliest).fill(null);
  const readDelta = async (id: number): Promise<{ id: number; snapshot: Snapshot | null; entries: DeltaEntry[] }> => {
    checkAborted(options.signal);
    // Successors read while choosing the range are not read again.
    const snapshot = id === end ? endSnapshot : (known.get(id) ?? (await snapshots.tryGet(id)));
    known.delete(id);
    const entries: DeltaEntry[] = [];
    // Snapshot `earliest` is read for steps 2-4 only: its delta is not part of the range.
    const delta = snapshot === null || id === earliest ? null : await tryReadManifestList(io, paths, snapshot.deltaManifestList);
    // Step 3 needs the delta lists of the expiring snapshots again: keep their (small) metas.
    if (delta !== null && snapshot !== null && id < end) deltaLists.set(snapshot.deltaManifestList, delta);
    // A missing delta list was processed by an interrupted earlier run.
    for (const m of delta ?? []) {
      for await (const e of tolerantEntries(io, paths, m)) {
        entries.push({
          add: e.kind !== 'DELETE',
          path: locator.dataFile(e),
          extra: e.kind === 'DELETE' ? locator.extraFiles(e) : [],
          size: e.file.fileSize,
        });
      }
    }
    return { id, snapshot, entries };
  };
  for await (const { id, snapshot, entries } of mapOrdered(idRange(earliest, end + 1), METADATA_READ_CONCURRENCY, readDelta)) {
    if (id < end) expiring[id - earliest] = snapshot;
    for (const e of entries) {
      if (e.add) marked.delete(e.path);
      else marked.set(e.path, { path: e.path, extra: e.extra, size: e.size, deletedIn: id });
    }
    if (id > earliest) progress('reading-deltas', id - earliest, end - earliest);
  }
  // Never delete what the first retained snapshot still has (covers unusual histories such as
  // rollbacks), nor what a tag has: per Paimon, the newest tag before the deleting snapshot.
  if (marked.size > 0) await unmarkLive(io, paths, locator, endSnapshot, marked, `snapshot ${end}`);
  for (let i = 0; i < tags.length && marked.size > 0; i++) {
    const { name, tag } = tags[i]!;
    const nextTagId = tags[i + 1]?.tag.id ?? Number.MAX_SAFE_INTEGER;
    // The tag governs files deleted by snapshots in (tag.id, next tag's id].
    const governed = new Map<string, Marked>();
    for (const [k, v] of marked) if (v.deletedIn > tag.id && v.deletedIn <= nextTagId) governed.set(k, v);
    if (governed.size === 0) continue;
    const candidates = [...governed.keys()];
    await unmarkLive(io, paths, locator, tag, governed, `tag '${name}'`);
    for (const k of candidates) if (!governed.has(k)) marked.delete(k);
  }
  await deleteAll(
    'data-files',
    (function* () {
      for (const m of marked.values()) {
        yield { path: m.path, size: m.size };
        for (const x of m.extra) yield { path: x, size: 0 };
      }
    })(),
  );
  marked.clear();

  // 2. Changelog files of the expired snapshots (tagged snapshots keep theirs).
  const taggedIds = new Set(tags.map((t) => t.tag.id));
  const withChangelog = decoupled
    ? []
    : expiring.filter((s): s is Snapshot => s !== null && !!s.changelogManifestList && !taggedIds.has(s.id));
  const readChangelog = async (s: Snapshot): Promise<Array<{ path: string; size: number }>> => {
    checkAborted(options.signal);
    const files: Array<{ path: string; size: number }> = [];
    const list = await tryReadManifestList(io, paths, s.changelogManifestList);
    for (const m of list ?? []) {
      for await (const e of tolerantEntries(io, paths, m)) {
        if (e.kind !== 'ADD') continue;
        files.push({ path: locator.dataFile(e), size: e.file.fileSize });
        for (const x of locator.extraFiles(e)) files.push({ path: x, size: 0 });
      }
    }
    return files;
  };
  await deleteAll(
    'changelog-files',
    (async function* () {
      for await (const files of mapOrdered(withChangelog, METADATA_READ_CONCURRENCY, readChangelog)) yield* files;
    })(),
  );

  // 3. Manifests, index files, statistics, then manifest lists and index manifests.
  checkAborted(options.signal);
  const skip = new Set<string>();
  const keepers: Array<{ s: Snapshot | Tag; what: string }> = [
    { s: endSnapshot, what: `snapshot ${end}` },
    ...tags.map(({ name, tag }) => ({ s: tag, what: `tag '${name}'` })),
  ];
  for await (const names of mapOrdered(keepers, METADATA_READ_CONCURRENCY, (k) => metadataNames(io, paths, k.s, k.what))) {
    for (const n of names) skip.add(n);
  }
  const leafFiles = new Map<string, { path: string; size: number }>();
  const rootFiles = new Map<string, { path: string; size: number }>();
  const statsDir = joinPath(paths.root, 'statistics');
  const readMetadata = async (
    s: Snapshot,
  ): Promise<{ leaves: Array<[string, { path: string; size: number }]>; roots: Array<[string, { path: string; size: number }]> }> => {
    checkAborted(options.signal);
    const leaves: Array<[string, { path: string; size: number }]> = [];
    const roots: Array<[string, { path: string; size: number }]> = [];
    const sizes: Record<string, number | undefined> = {
      [s.baseManifestList]: s.baseManifestListSize,
      [s.deltaManifestList]: s.deltaManifestListSize,
      ...(s.changelogManifestList ? { [s.changelogManifestList]: s.changelogManifestListSize } : {}),
    };
    for (const listName of manifestListNames(s)) {
      // A decoupled changelog keeps its manifests until it expires itself.
      if (skip.has(listName) || (decoupled && listName === s.changelogManifestList)) continue;
      const list = deltaLists.get(listName) ?? (await tryReadManifestList(io, paths, listName));
      for (const m of list ?? []) {
        if (!skip.has(m.fileName)) leaves.push([m.fileName, { path: paths.manifestPath(m.fileName), size: m.fileSize }]);
      }
      if (list !== null) roots.push([listName, { path: paths.manifestPath(listName), size: sizes[listName] ?? 0 }]);
    }
    if (s.indexManifest && !skip.has(s.indexManifest)) {
      const index = await tryReadIndexManifest(io, paths, s.indexManifest);
      for (const e of index ?? []) {
        if (e.kind === 'ADD' && !skip.has(e.fileName)) {
          leaves.push([e.fileName, { path: e.externalPath ?? paths.indexPath(e.fileName), size: e.fileSize }]);
        }
      }
      if (index !== null) roots.push([s.indexManifest, { path: paths.manifestPath(s.indexManifest), size: 0 }]);
    }
    if (s.statistics && !skip.has(s.statistics)) leaves.push([s.statistics, { path: joinPath(statsDir, s.statistics), size: 0 }]);
    return { leaves, roots };
  };
  const present = expiring.filter((s): s is Snapshot => s !== null);
  for await (const { leaves, roots } of mapOrdered(present, METADATA_READ_CONCURRENCY, readMetadata)) {
    for (const [k, v] of leaves) leafFiles.set(k, v);
    for (const [k, v] of roots) rootFiles.set(k, v);
  }
  await deleteAll('manifests', leafFiles.values());
  await deleteAll('manifest-lists', rootFiles.values());
  leafFiles.clear();
  rootFiles.clear();
  deltaLists.clear();

  // 4. Snapshot files, in batches of `snapshotBatchSize` ids, oldest batch first. One batch
  //    (a DeleteObjects request) has no deletion order, so EARLIEST is moved past the batch before
  //    it is deleted: readers and writers trust the hint while its snapshot exists, and whatever a
  //    kill leaves of the batch sits below it (leftovers, deleted at the start of the next run).
  //    The batch's newest file goes last, alone, so that "snapshot EARLIEST-1 exists" tells the
  //    next run, in one request, that a batch was cut short. Only snapshots read above are deleted
  //    (the others are already gone); deleting a file that vanished meanwhile is not an error.
  let expired = 0;
  let hinted: number | null = null;
  const changelogs = new ChangelogManager(io, paths);
  progress('snapshots', 0, end - earliest);
  for (let from = earliest; from < end; from += batchSize) {
    checkAborted(options.signal);
    const to = Math.min(from + batchSize, end);
    const batch: Snapshot[] = [];
    for (let id = from; id < to; id++) {
      const s = expiring[id - earliest];
      if (s !== null && s !== undefined) batch.push(s);
    }
    if (batch.length === 0) continue;
    // The hint must name a snapshot that exists: the first one present at or after `to`.
    let hintId = to;
    while (hintId < end && (expiring[hintId - earliest] ?? null) === null) hintId++;
    const batchPaths = batch.map((s) => paths.snapshotPath(s.id));
    if (listDeleted) deletedList.push(...batchPaths);
    if (!dryRun) {
      // The changelogs are kept before their snapshots go, so readers never miss both.
      if (decoupled) {
        for await (const _ of mapOrdered(batch, METADATA_READ_CONCURRENCY, (s) => changelogs.commit(s))) checkAborted(options.signal);
      }
      await io.write(paths.earliestHint, String(hintId));
      hinted = hintId;
      const last = batchPaths.pop()!;
      if (batchPaths.length > 0) await io.deleteMany(batchPaths);
      await io.delete(last);
    }
    filesDeleted += batch.length;
    expired += batch.length;
    progress('snapshots', to - earliest, end - earliest);
  }
  progress('snapshots', end - earliest, end - earliest);

  // 5. EARLIEST hint (already `end` when the last batch held a snapshot).
  if (!dryRun && hinted !== end) await io.write(paths.earliestHint, String(end));
  return summary(expired, end); // a dry run reports the earliest snapshot the real run would leave
}

/** Paimon's choice of the expiring range `[earliest, end)`, or null when nothing expires. */
async function computeRange(
  io: FileIO,
  paths: TablePaths,
  snapshots: SnapshotManager,
  /** Receives the snapshots read on the way (successors inside the range), for step 1. */
  known: Map<number, Snapshot>,
  a: {
    earliestId: number;
    latestId: number;
    retainMin: number;
    retainMax: number;
    limit: number;
    olderThan: number;
    consumersStaleBefore: number | null;
    dryRun: boolean;
  },
): Promise<ExpireRange | null> {
  const { earliestId: earliest, latestId: latest } = a;
  // Snapshots below `min` go regardless of age (retainMax); from `min` on, only old enough ones.
  const min = Math.max(latest - a.retainMax + 1, earliest);
  let maxExclusive = Math.min(latest - a.retainMin + 1, earliest + a.limit);
  const consumerMin = await minConsumerSnapshot(io, paths, a.consumersStaleBefore, a.dryRun);
  if (consumerMin !== null) maxExclusive = Math.min(maxExclusive, consumerMin);
  if (maxExclusive <= earliest) return null;
  let end = maxExclusive;
  // A snapshot may go only once its successor is older than the retention threshold, so time
  // travel to any instant inside the retention window still finds its snapshot.
  const successors = mapOrdered(idRange(min, maxExclusive), METADATA_READ_CONCURRENCY, async (id) => ({
    id,
    next: await snapshots.tryGet(id + 1),
  }));
  for await (const { id, next } of successors) {
    if (next !== null) known.set(next.id, next);
    if (next !== null && next.timeMillis >= a.olderThan) {
      end = id;
      break;
    }
  }
  return end > earliest ? { earliest, end } : null;
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

/** Entries of a manifest of an expiring snapshot; a missing manifest (deleted by an earlier run) yields nothing. */
async function* tolerantEntries(io: FileIO, paths: TablePaths, m: ManifestFileMeta): ReturnType<typeof readManifestEntries> {
  try {
    yield* readManifestEntries(io, paths.manifestPath(m.fileName));
  } catch (e) {
    if (e instanceof NotFoundError) return;
    throw e;
  }
}

/**
 * Removes from `marked` every file live in `snapshot` (a retained snapshot or a tag). Its
 * manifests must be readable: otherwise nothing can be proven safe and the run stops.
 */
async function unmarkLive(
  io: FileIO,
  paths: TablePaths,
  locator: DataFileLocator,
  snapshot: Snapshot | Tag,
  marked: Map<string, Marked>,
  what: string,
): Promise<void> {
  const net = new Map<string, number>();
  for (const listName of [snapshot.baseManifestList, snapshot.deltaManifestList]) {
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) {
      try {
        for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
          const path = locator.dataFile(e);
          if (!marked.has(path)) continue;
          net.set(path, (net.get(path) ?? 0) + (e.kind === 'ADD' ? 1 : -1));
        }
      } catch (err) {
        if (err instanceof NotFoundError) throw missing(paths, what, m.fileName);
        throw err;
      }
    }
  }
  for (const [path, n] of net) if (n > 0) marked.delete(path);
}

function missing(paths: TablePaths, what: string, name: string): MaintenanceError {
  return new MaintenanceError(
    `${what} of ${paths.root} references manifest file '${name}', which does not exist; expiration stopped before deleting data files that ${what} might need`,
  );
}

/** Every metadata file name a retained snapshot or tag references. */
async function metadataNames(io: FileIO, paths: TablePaths, s: Snapshot | Tag, what: string): Promise<string[]> {
  const names: string[] = [];
  for (const listName of manifestListNames(s)) {
    names.push(listName);
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) names.push(m.fileName);
  }
  if (s.indexManifest) {
    names.push(s.indexManifest);
    const index = await tryReadIndexManifest(io, paths, s.indexManifest);
    if (index === null) throw missing(paths, what, s.indexManifest);
    for (const e of index) names.push(e.fileName);
  }
  if (s.statistics) names.push(s.statistics);
  return names;
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
