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
import { NotFoundError, joinPath, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type ManifestFileMeta, type Snapshot, type Tag } from '@tidemark/format';
import { OtherBranches } from '../branch/other-branches.js';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { tableOptions } from '../core-options.js';
import { ConsumerError } from '../errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import type { TablePaths } from '../table-paths.js';
import { EXPIRE_READ_WINDOW, METADATA_READ_CONCURRENCY, idRange, mapOrdered, rampingWindow } from './bounded-map.js';
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
   * Snapshot files deleted per batch (default 1,000, one S3 DeleteObjects request), and changelog
   * files by the changelog expiration that follows. The EARLIEST hint is written once per batch; a
   * kill in the middle of a batch leaves at most this many leftover snapshot files below it, which
   * the next run deletes.
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

/** A file to delete, with its size as the metadata gives it. */
interface FileRef {
  readonly path: string;
  readonly size: number;
}

/** What an expiring snapshot references besides its delta entries (steps 2 and 3). */
interface ExpiringFiles {
  /** Manifests, index files and statistics files, by name. */
  readonly leaves: ReadonlyArray<readonly [string, FileRef]>;
  /** Manifest lists and index manifests, by name. */
  readonly roots: ReadonlyArray<readonly [string, FileRef]>;
  readonly changelogFiles: readonly FileRef[];
}

/** One task of the read pass: snapshot `id`, and when `id - 1` expires, what the range needs of both. */
interface PassStep {
  readonly id: number;
  readonly snapshot: Snapshot | null;
  /** Snapshot `id - 1` is retained: `id` is too young (the range ends at `id - 1`). */
  readonly stop: boolean;
  readonly prev?: Snapshot | null;
  /** Entries of the delta of `id`. */
  readonly delta?: readonly DeltaEntry[];
  /** The delta list of `id` (null when gone): the first retained snapshot's is needed again. */
  readonly deltaList?: ManifestFileMeta[] | null;
  /** What `id - 1` references (null when its file is gone). */
  readonly files?: ExpiringFiles | null;
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
  const bounds = await rangeBounds(io, paths, { earliestId, latestId, retainMin, retainMax, limit, consumersStaleBefore, dryRun });
  if (bounds === null) {
    if (!dryRun) await ensureEarliestHint(io, paths, earliestId);
    return summary(0, earliestId);
  }
  const { min, maxExclusive } = bounds;
  const earliest = earliestId;
  const locator = new DataFileLocator(paths, schema);
  // Tags are read once a snapshot is known to expire (a run that expires nothing skips them).
  let tagsRead: Promise<Array<{ name: string; tag: Tag }>> | null = null;
  const readTags = (): Promise<Array<{ name: string; tag: Tag }>> => (tagsRead ??= new TagManager(io, paths).list());

  // One pipelined read pass over the candidates (earliest, maxExclusive]. Reading snapshot `id`
  // tells whether `id - 1` expires (Paimon: a snapshot goes once its successor is older than the
  // retention threshold); if it does, the same task reads the delta of `id` (step 1: `id` is at
  // most the first retained snapshot) and the lists of `id - 1` (steps 2 and 3), so every metadata
  // file of the range is read once, in one window. The window starts at one task and widens as
  // snapshots keep expiring, so a run that expires little reads little ahead.
  const snapshotReads = new Map<number, Promise<Snapshot | null>>();
  const readSnapshot = (id: number): Promise<Snapshot | null> => {
    let p = snapshotReads.get(id);
    if (p === undefined) {
      p = snapshots.tryGet(id);
      p.catch(() => undefined); // awaited by the tasks of `id` and `id + 1`
      snapshotReads.set(id, p);
    }
    return p;
  };
  const readIndexOnce = new Set<string>();
  const statsDir = joinPath(paths.root, 'statistics');
  // The delta of `id` is read by the task of `id` and its list serves the task of `id + 1` too.
  const deltaReads = new Map<number, Promise<{ list: ManifestFileMeta[] | null; entries: DeltaEntry[] } | null>>();
  const readStep = async (id: number): Promise<PassStep> => {
    checkAborted(options.signal);
    const snapshot = await readSnapshot(id);
    // A missing successor does not stop the range (the chain is checked by the batches of step 4).
    if (id - 1 >= min && snapshot !== null && snapshot.timeMillis >= olderThan) return { id, snapshot, stop: true };
    const deltaRead = snapshot === null ? Promise.resolve(null) : readDelta(snapshot);
    deltaRead.catch(() => undefined); // awaited below and by the task of `id + 1`
    deltaReads.set(id, deltaRead);
    // The lists of `id - 1` are read while the delta of `id` is.
    const prevFiles = (async (): Promise<{ prev: Snapshot | null; files: ExpiringFiles | null }> => {
      const prev = await readSnapshot(id - 1);
      if (prev === null) return { prev, files: null };
      const first = prev.id === earliest;
      const prevDelta = first ? null : ((await deltaReads.get(prev.id)) ?? null);
      return { prev, files: await readExpiringMetadata(prev, prevDelta?.list ?? null, first) };
    })();
    const [delta, { prev, files }] = await Promise.all([deltaRead, prevFiles]);
    return { id, snapshot, stop: false, prev, delta: delta?.entries ?? [], deltaList: delta?.list ?? null, files };
  };
  /** Delta entries of a snapshot of (earliest, end] (step 1), and its delta list (step 3). */
  const readDelta = async (s: Snapshot): Promise<{ list: ManifestFileMeta[] | null; entries: DeltaEntry[] }> => {
    // A missing delta list was processed by an interrupted earlier run.
    const list = await tryReadManifestList(io, paths, s.deltaManifestList);
    const entries: DeltaEntry[] = [];
    for (const m of list ?? []) {
      for await (const e of tolerantEntries(io, paths, m)) {
        entries.push({
          add: e.kind !== 'DELETE',
          path: locator.dataFile(e),
          extra: e.kind === 'DELETE' ? locator.extraFiles(e) : [],
          size: e.file.fileSize,
        });
      }
    }
    return { list, entries };
  };
  /**
   * What an expiring snapshot references besides its delta entries: manifests, index and
   * statistics files (leaves), manifest lists and index manifests (roots), and its changelog files.
   * All are candidates: step 3 keeps those a retained snapshot or tag names.
   */
  const readExpiringMetadata = async (
    s: Snapshot,
    /** The snapshot's delta list when the delta pass read it already. */
    deltaList: ManifestFileMeta[] | null,
    readDeltaList: boolean,
  ): Promise<ExpiringFiles> => {
    const leaves: Array<[string, FileRef]> = [];
    const roots: Array<[string, FileRef]> = [];
    const changelogFiles: FileRef[] = [];
    const addList = (name: string, size: number | undefined, list: ManifestFileMeta[] | null): void => {
      if (list === null) return; // deleted by an interrupted earlier run
      for (const m of list) leaves.push([m.fileName, { path: paths.manifestPath(m.fileName), size: m.fileSize }]);
      roots.push([name, { path: paths.manifestPath(name), size: size ?? 0 }]);
    };
    const readChangelog = async (): Promise<void> => {
      // A decoupled changelog keeps its manifests until it expires itself.
      if (decoupled || !s.changelogManifestList) return;
      const list = await tryReadManifestList(io, paths, s.changelogManifestList);
      addList(s.changelogManifestList, s.changelogManifestListSize, list);
      // Step 2: the changelog files themselves, unless a tag keeps the snapshot.
      if (list === null || list.length === 0 || (await readTags()).some((t) => t.tag.id === s.id)) return;
      for (const m of list) {
        for await (const e of tolerantEntries(io, paths, m)) {
          if (e.kind !== 'ADD') continue;
          changelogFiles.push({ path: locator.dataFile(e), size: e.file.fileSize });
          for (const x of locator.extraFiles(e)) changelogFiles.push({ path: x, size: 0 });
        }
      }
    };
    const readIndex = async (): Promise<void> => {
      // Snapshots share an index manifest until the index changes: read each one once.
      if (!s.indexManifest || readIndexOnce.has(s.indexManifest)) return;
      readIndexOnce.add(s.indexManifest);
      const index = await tryReadIndexManifest(io, paths, s.indexManifest);
      if (index === null) return;
      for (const e of index) {
        if (e.kind === 'ADD') leaves.push([e.fileName, { path: e.externalPath ?? paths.indexPath(e.fileName), size: e.fileSize }]);
      }
      roots.push([s.indexManifest, { path: paths.manifestPath(s.indexManifest), size: 0 }]);
    };
    await Promise.all([
      tryReadManifestList(io, paths, s.baseManifestList).then((l) => addList(s.baseManifestList, s.baseManifestListSize, l)),
      readDeltaList
        ? tryReadManifestList(io, paths, s.deltaManifestList).then((l) => addList(s.deltaManifestList, s.deltaManifestListSize, l))
        : Promise.resolve(),
      readChangelog(),
      readIndex(),
    ]);
    // Read by the delta pass when `s` is past the earliest snapshot.
    if (!readDeltaList) addList(s.deltaManifestList, s.deltaManifestListSize, deltaList);
    if (s.statistics) leaves.push([s.statistics, { path: joinPath(statsDir, s.statistics), size: 0 }]);
    return { leaves, roots, changelogFiles };
  };

  checkAborted(options.signal);
  // Bounded by the expire limit, as the snapshots themselves: the DELETE entries of the range,
  // the metadata file names it references and its changelog files.
  const marked = new Map<string, Marked>();
  const leafFiles = new Map<string, FileRef>();
  const rootFiles = new Map<string, FileRef>();
  const changelogFiles: FileRef[] = [];
  const expiring: Array<Snapshot | null> = [];
  let end = maxExclusive;
  let endSnapshot: Snapshot | null = null;
  let endDeltaList: ManifestFileMeta[] | null = null;
  for await (const step of mapOrdered(idRange(earliest + 1, maxExclusive + 1), rampingWindow(EXPIRE_READ_WINDOW), readStep)) {
    if (step.stop) {
      end = step.id - 1;
      break;
    }
    // `step.id - 1` expires; folded in snapshot order so that a DELETE followed by an ADD of the
    // same file (level upgrade) keeps it.
    expiring.push(step.prev ?? null);
    for (const e of step.delta ?? []) {
      if (e.add) marked.delete(e.path);
      else marked.set(e.path, { path: e.path, extra: e.extra, size: e.size, deletedIn: step.id });
    }
    for (const [k, v] of step.files?.leaves ?? []) leafFiles.set(k, v);
    for (const [k, v] of step.files?.roots ?? []) rootFiles.set(k, v);
    for (const f of step.files?.changelogFiles ?? []) changelogFiles.push(f);
    snapshotReads.delete(step.id - 1);
    deltaReads.delete(step.id - 1);
    endSnapshot = step.snapshot;
    endDeltaList = step.deltaList ?? null;
    progress('reading-deltas', step.id - earliest, maxExclusive - earliest);
  }
  snapshotReads.clear();
  deltaReads.clear();
  if (end <= earliest) {
    if (!dryRun) await ensureEarliestHint(io, paths, earliestId);
    return summary(0, earliestId);
  }
  if (endSnapshot === null) {
    throw new MaintenanceError(
      `snapshot ${end} of ${paths.root}, the first one to retain, cannot be read; expiration stopped without deleting anything`,
    );
  }
  const tags = await readTags();
  // What the first retained snapshot and the tags reference is kept: their lists are read once,
  // for the names (step 3) and, for the retained snapshot, for its live data files (step 1).
  const skip = new Set<string>();
  // The delta pass read the retained snapshot's delta list already.
  const endKnown = endDeltaList === null ? {} : { [endSnapshot.deltaManifestList]: endDeltaList };
  const keepers: Array<{ s: Snapshot | Tag; what: string; known: Record<string, ManifestFileMeta[]> }> = [
    { s: endSnapshot, what: `snapshot ${end}`, known: endKnown },
    ...tags.map(({ name, tag }) => ({ s: tag, what: `tag '${name}'`, known: {} })),
  ];
  let endLists: ManifestFileMeta[] | null = null;
  for await (const { names, lists } of mapOrdered(keepers, METADATA_READ_CONCURRENCY, (k) =>
    metadataNames(io, paths, k.s, k.what, k.known),
  )) {
    for (const n of names) skip.add(n);
    endLists ??= lists; // keepers[0]
  }
  // Other branches share the files of the snapshots they were made or fast-forwarded from.
  const others = await OtherBranches.read(io, paths, end, options.signal);
  if (others !== null) for (const n of await others.metadataNames(options.signal)) skip.add(n);

  // 1. Data files deleted by snapshots (earliest, end]. Never delete what the first retained
  //    snapshot still has (covers unusual histories such as rollbacks), nor what a tag has: per
  //    Paimon, the newest tag before the deleting snapshot.
  if (marked.size > 0) await unmarkLive(io, paths, locator, endLists ?? [], marked, `snapshot ${end}`);
  for (let i = 0; i < tags.length && marked.size > 0; i++) {
    const { name, tag } = tags[i]!;
    const nextTagId = tags[i + 1]?.tag.id ?? Number.MAX_SAFE_INTEGER;
    // The tag governs files deleted by snapshots in (tag.id, next tag's id].
    const governed = new Map<string, Marked>();
    for (const [k, v] of marked) if (v.deletedIn > tag.id && v.deletedIn <= nextTagId) governed.set(k, v);
    if (governed.size === 0) continue;
    const candidates = [...governed.keys()];
    await unmarkLive(io, paths, locator, await liveLists(io, paths, tag, `tag '${name}'`), governed, `tag '${name}'`);
    for (const k of candidates) if (!governed.has(k)) marked.delete(k);
  }
  if (others !== null && marked.size > 0) await others.keepUsed(marked, locator, options.signal);
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
  checkAborted(options.signal);
  await deleteAll('changelog-files', others === null ? changelogFiles : await others.unused(changelogFiles, locator, options.signal));
  changelogFiles.length = 0;

  // 3. Manifests, index files, statistics, then manifest lists and index manifests.
  checkAborted(options.signal);
  const unused = (files: Map<string, FileRef>) =>
    (function* () {
      for (const [name, f] of files) if (!skip.has(name)) yield f;
    })();
  await deleteAll('manifests', unused(leafFiles));
  await deleteAll('manifest-lists', unused(rootFiles));
  leafFiles.clear();
  rootFiles.clear();

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
    retainMin: number;
    retainMax: number;
    limit: number;
    consumersStaleBefore: number | null;
    dryRun: boolean;
  },
): Promise<{ min: number; maxExclusive: number } | null> {
  const { earliestId: earliest, latestId: latest } = a;
  const min = Math.max(latest - a.retainMax + 1, earliest);
  let maxExclusive = Math.min(latest - a.retainMin + 1, earliest + a.limit);
  const consumerMin = await minConsumerSnapshot(io, paths, a.consumersStaleBefore, a.dryRun);
  if (consumerMin !== null) maxExclusive = Math.min(maxExclusive, consumerMin);
  return maxExclusive > earliest ? { min, maxExclusive } : null;
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
 * Removes from `marked` every file live in a retained snapshot or tag, given the metas of its base
 * and delta lists. Its manifests must be readable: otherwise nothing can be proven safe and the
 * run stops. Manifests are read in a bounded window; the net count per file does not depend on
 * the order.
 */
async function unmarkLive(
  io: FileIO,
  paths: TablePaths,
  locator: DataFileLocator,
  manifests: readonly ManifestFileMeta[],
  marked: Map<string, Marked>,
  what: string,
): Promise<void> {
  const readNet = async (m: ManifestFileMeta): Promise<Map<string, number>> => {
    const net = new Map<string, number>();
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
    return net;
  };
  const net = new Map<string, number>();
  for await (const part of mapOrdered(manifests, METADATA_READ_CONCURRENCY, readNet)) {
    for (const [path, n] of part) net.set(path, (net.get(path) ?? 0) + n);
  }
  for (const [path, n] of net) if (n > 0) marked.delete(path);
}

/** The manifests of a retained snapshot's or tag's base and delta lists, which must exist. */
async function liveLists(io: FileIO, paths: TablePaths, s: Snapshot | Tag, what: string): Promise<ManifestFileMeta[]> {
  const out: ManifestFileMeta[] = [];
  for (const listName of [s.baseManifestList, s.deltaManifestList]) {
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    out.push(...list);
  }
  return out;
}

function missing(paths: TablePaths, what: string, name: string): MaintenanceError {
  return new MaintenanceError(
    `${what} of ${paths.root} references manifest file '${name}', which does not exist; expiration stopped before deleting data files that ${what} might need`,
  );
}

/**
 * Every metadata file name a retained snapshot or tag references, and the manifests of its base
 * and delta lists (the files it has live), so that the lists are read once.
 */
async function metadataNames(
  io: FileIO,
  paths: TablePaths,
  s: Snapshot | Tag,
  what: string,
  /** Lists already read, by name. */
  known: Readonly<Record<string, ManifestFileMeta[]>>,
): Promise<{ names: string[]; lists: ManifestFileMeta[] }> {
  const names: string[] = [];
  const lists: ManifestFileMeta[] = [];
  const listNames = manifestListNames(s);
  const read = await Promise.all(listNames.map((n) => known[n] ?? tryReadManifestList(io, paths, n)));
  for (const [i, listName] of listNames.entries()) {
    names.push(listName);
    const list = read[i]!;
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) names.push(m.fileName);
    // manifestListNames gives the base and the delta list first.
    if (i < 2) lists.push(...list);
  }
  if (s.indexManifest) {
    names.push(s.indexManifest);
    const index = await tryReadIndexManifest(io, paths, s.indexManifest);
    if (index === null) throw missing(paths, what, s.indexManifest);
    for (const e of index) names.push(e.fileName);
  }
  if (s.statistics) names.push(s.statistics);
  return { names, lists };
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
