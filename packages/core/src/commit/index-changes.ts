/**
 * Index files in commits: merging a commit's index changes into the previous snapshot's index
 * manifest (Java's `IndexManifestFileHandler`), and making concurrent dynamic-bucket commits safe.
 *
 * A snapshot's index manifest is the complete list of live index files. Hash indexes and
 * deletion vectors of bucketed tables have at most one file per (partition, bucket, index type):
 * a DELETE removes that slot, an ADD fills it, replacing what was there. Deletion vectors of
 * bucket-unaware tables and global indexes are keyed by file name instead.
 *
 * Concurrency: Java assumes one bucket assigner per partition; tidemark commits lock-free from
 * many processes. A writer assigns buckets against the hash index of some snapshot (its base) and
 * rewrites the index files of the buckets it touched. When other commits landed since that base,
 * {@link resolveHashIndexChanges} compares the keys this commit added with the index files those
 * commits wrote in the same partitions:
 * - a key hash this commit added to bucket A that another commit put into bucket B != A means the
 *   key would live in two buckets: the commit fails with {@link DynamicBucketConflictError}, and
 *   the writer re-plans against the new latest snapshot;
 * - otherwise, a bucket whose index file both rewrote gets a merged file (the other file's hashes
 *   plus the hashes this commit added), so neither side's keys drop out of the index.
 */
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_TYPE_DELETION_VECTORS,
  INDEX_TYPE_HASH,
  decodeHashIndex,
  indexManifestEntryOf,
  readIndexManifest,
  type IndexFileMeta,
  type IndexManifestEntry,
  type Snapshot,
} from '@tidemark/format';
import { SnapshotManager } from '../snapshot-manager.js';
import type { FileStorePathFactory } from '../path-factory.js';
import { CommitConflictError } from './commit-errors.js';
import { liveEntries, partitionKey } from './manifest-fold.js';
import type { ManifestSource } from './metadata-cache.js';

/**
 * Two commits placed one new key in different buckets of a dynamic-bucket table. Nothing of the
 * failed commit is visible. Retryable: plan the bucket assignment again against the latest
 * snapshot (the table write path does this by itself) and commit the rewritten files.
 */
export class DynamicBucketConflictError extends CommitConflictError {
  /** The writer can succeed by re-planning against the latest snapshot. */
  readonly retryable = true;

  constructor(
    message: string,
    /** Serialized partition rows (hex) whose bucket assignment collided. */
    readonly partitions: readonly string[],
    /** Number of key hashes assigned to two buckets. */
    readonly keyCount: number,
    latestSnapshotId: number | null,
  ) {
    super(message, [], latestSnapshotId);
  }
}

/**
 * Another commit changed the deletion vectors this commit rewrites (the same bucket's DV file, or
 * a vector of the same data file), or removed a data file this commit marks rows of. Committing
 * would drop the other commit's deletions, so nothing of this commit is visible. Retryable: plan
 * the change again against the latest snapshot.
 */
export class DeletionVectorConflictError extends CommitConflictError {
  /** The writer can succeed by planning again against the latest snapshot. */
  readonly retryable = true;
}

/** Index changes of one commit, with what the dynamic-bucket assigner planned against. */
export interface IndexChanges {
  /** ADD entries for new index files and DELETE entries for the files they replace or drop. */
  readonly entries: readonly IndexManifestEntry[];
  /**
   * Per partition (hex of its bytes): id of the snapshot whose hash index the bucket assignment
   * used (null = the empty table). Partitions with HASH changes and no entry here are checked
   * against every hash index file of the partition.
   */
  readonly hashIndexBase: ReadonlyMap<string, number | null>;
  /** The commit replaces the partitions it writes (overwrite): their old indexes do not matter. */
  readonly replacesPartitions?: boolean;
}

/** How the commit writes a merged hash index file. */
export type WriteHashIndexFile = (hashes: Int32Array) => Promise<IndexFileMeta>;

function slotKey(e: IndexManifestEntry): string {
  return `${partitionKey(e.partition)}|${e.bucket}|${e.indexType}`;
}

/**
 * The live index entries after applying `changes` to `previous` (all ADD), as Java combines them.
 * `bucketUnaware`: the table has `bucket = -1` and no primary key (deletion vectors keyed by file).
 */
export function combineIndexEntries(
  previous: readonly IndexManifestEntry[],
  changes: readonly IndexManifestEntry[],
  bucketUnaware: boolean,
): IndexManifestEntry[] {
  const byFile = (type: string): boolean => !(type === INDEX_TYPE_HASH || (type === INDEX_TYPE_DELETION_VECTORS && !bucketUnaware));
  const key = (e: IndexManifestEntry): string => (byFile(e.indexType) ? `file|${e.fileName}` : `slot|${slotKey(e)}`);
  const live = new Map<string, IndexManifestEntry>();
  for (const e of previous) live.set(key(e), e);
  // Deletes first, so that a commit replacing a slot's file (DELETE old + ADD new) keeps the new one.
  for (const e of changes) if (e.kind === 'DELETE') live.delete(key(e));
  for (const e of changes) if (e.kind === 'ADD') live.set(key(e), e);
  return [...live.values()];
}

/** The index manifest entries of `snapshot` (none when it has no index manifest). */
export async function snapshotIndexEntries(
  fileIO: FileIO,
  paths: FileStorePathFactory,
  snapshot: Snapshot | null,
): Promise<IndexManifestEntry[]> {
  if (snapshot === null || !snapshot.indexManifest) return [];
  return readIndexManifest(fileIO, paths.manifestPath(snapshot.indexManifest));
}

/** `index-<uuid>-` of `index-<uuid>-<n>`: the files one assigner (or commit) wrote share it. */
function writerPrefix(fileName: string): string {
  return fileName.slice(0, fileName.lastIndexOf('-') + 1);
}

function hashSlots(entries: readonly IndexManifestEntry[], part: string): Set<string> {
  const out = new Set<string>();
  for (const e of entries) if (e.indexType === INDEX_TYPE_HASH && partitionKey(e.partition) === part) out.add(`${e.bucket}|${e.fileName}`);
  return out;
}

/**
 * Whether an OVERWRITE snapshot after `baseId` changed the hash index of `part` (overwrites are
 * the only commits that drop key hashes): `'overwritten'`, `'expired'` when a snapshot of the range
 * expired (so it cannot be told), or null.
 */
async function overwrittenSince(
  fileIO: FileIO,
  paths: FileStorePathFactory,
  snapshots: SnapshotManager,
  baseId: number | null,
  latest: Snapshot,
  part: string,
): Promise<'overwritten' | 'expired' | null> {
  let prev: Snapshot | null = null;
  if (baseId !== null) {
    prev = await snapshots.tryGet(baseId);
    if (prev === null) return 'expired';
  }
  for (let id = (baseId ?? 0) + 1; id <= latest.id; id++) {
    const s = id === latest.id ? latest : await snapshots.tryGet(id);
    if (s === null) return 'expired';
    if (s.commitKind === 'OVERWRITE' && s.indexManifest !== prev?.indexManifest) {
      const before = hashSlots(await snapshotIndexEntries(fileIO, paths, prev), part);
      const after = hashSlots(await snapshotIndexEntries(fileIO, paths, s), part);
      if (before.size !== after.size || [...before].some((x) => !after.has(x))) return 'overwritten';
    }
    prev = s;
  }
  return null;
}

/**
 * The conflict of a commit whose partitions' hash index may have changed since its bucket
 * assignment: overwritten, or unknown because snapshots after its base expired (an ordinary race
 * with expiration, worded as such).
 */
async function staleAssignmentError(
  paths: FileStorePathFactory,
  snapshots: SnapshotManager,
  latest: Snapshot,
  stale: ReadonlyMap<string, { readonly baseId: number | null; readonly why: 'overwritten' | 'expired' }>,
): Promise<DynamicBucketConflictError> {
  const all = [...stale.keys()];
  const overwritten = all.filter((p) => stale.get(p)!.why === 'overwritten');
  const where = `dynamic bucket conflict in ${paths.root}`;
  const replan = 're-plan the write against the latest snapshot';
  if (overwritten.length > 0) {
    return new DynamicBucketConflictError(
      `${where}: ${overwritten.length} partition(s) this commit writes were overwritten after its bucket assignment ` +
        `(latest snapshot ${latest.id}), so their hash index changed under it; ${replan}`,
      all,
      0,
      latest.id,
    );
  }
  const bases = [...new Set(all.map((p) => stale.get(p)!.baseId))].sort((a, b) => (a ?? 0) - (b ?? 0));
  const earliest = await snapshots.earliestId();
  return new DynamicBucketConflictError(
    `${where}: snapshot ${bases.map((b) => b ?? 'none').join(', ')}, whose hash index the bucket assignment of this commit read, ` +
      `expired before the commit (earliest snapshot now ${earliest ?? latest.id}), so whether ${all.length} partition(s) it writes ` +
      `were overwritten meanwhile cannot be checked; ${replan}`,
    all,
    0,
    latest.id,
  );
}

async function readHashes(fileIO: FileIO, paths: FileStorePathFactory, e: IndexFileMeta): Promise<Int32Array> {
  const path = paths.indexFilePath(e.fileName, e.externalPath);
  return decodeHashIndex(await fileIO.read(path), path, e.rowCount);
}

/**
 * This commit's index entries, made safe against the commits that landed between each
 * partition's hash-index base and `latest` (see the module comment). May write merged hash index
 * files through `write`.
 *
 * @throws DynamicBucketConflictError when a key hash this commit added to one bucket is in
 *   another bucket's index in `latest`.
 */
export async function resolveHashIndexChanges(
  fileIO: FileIO,
  paths: FileStorePathFactory,
  latest: Snapshot | null,
  changes: IndexChanges,
  write: WriteHashIndexFile,
): Promise<IndexManifestEntry[]> {
  if (changes.replacesPartitions) return [...changes.entries];
  const snapshots = new SnapshotManager(fileIO, paths);

  // Keys this commit routed to their indexed bucket were placed by the base's index: an overwrite
  // since then may have put them elsewhere (or dropped the index), so all of it is re-planned.
  const stale = new Map<string, { baseId: number | null; why: 'overwritten' | 'expired' }>();
  for (const [part, baseId] of changes.hashIndexBase) {
    if (latest === null || baseId === latest.id) continue;
    const why = await overwrittenSince(fileIO, paths, snapshots, baseId, latest, part);
    if (why !== null) stale.set(part, { baseId, why });
  }
  if (stale.size > 0) throw await staleAssignmentError(paths, snapshots, latest!, stale);

  const ours = changes.entries.filter((e) => e.kind === 'ADD' && e.indexType === INDEX_TYPE_HASH);
  if (ours.length === 0) return [...changes.entries];

  const parts = new Map<string, IndexManifestEntry[]>();
  for (const e of ours) {
    const k = partitionKey(e.partition);
    const list = parts.get(k) ?? [];
    list.push(e);
    parts.set(k, list);
  }
  const baseCache = new Map<number, Set<string> | null>();
  const baseNames = async (id: number | null | undefined): Promise<Set<string> | null> => {
    if (id === null) return new Set();
    if (id === undefined) return null;
    if (!baseCache.has(id)) {
      const s = await snapshots.tryGet(id);
      // An expired base is unknown: every file of the partition is then examined.
      baseCache.set(id, s === null ? null : new Set((await snapshotIndexEntries(fileIO, paths, s)).map((e) => e.fileName)));
    }
    return baseCache.get(id)!;
  };

  const replaced = new Map<IndexManifestEntry, IndexManifestEntry>();
  const dropped = new Set<IndexManifestEntry>();
  let latestEntries: IndexManifestEntry[] | null = null;
  const conflicts: Array<{ partition: string; count: number }> = [];
  for (const [part, entries] of parts) {
    const baseId = changes.hashIndexBase.get(part);
    const writers = new Set(entries.map((e) => writerPrefix(e.fileName)));
    // Files of several assigners in one commit (writers that did not share one): check them
    // against each other too.
    const latestId = latest?.id ?? null;
    if (baseId === latestId && writers.size === 1) continue;
    latestEntries ??= (await snapshotIndexEntries(fileIO, paths, latest)).filter((e) => e.indexType === INDEX_TYPE_HASH);
    const known = baseId === latestId ? new Set(latestEntries.map((e) => e.fileName)) : await baseNames(baseId);
    // Index files written by the same assigner as ours hold only hashes it placed consistently
    // (a long-lived writer's earlier commits): no need to read them.
    const ownFile = (name: string): boolean => writers.size === 1 && writers.has(writerPrefix(name));
    const changed = latestEntries.filter(
      (e) => partitionKey(e.partition) === part && (known === null || !known.has(e.fileName)) && !ownFile(e.fileName),
    );
    if (changed.length === 0 && writers.size === 1) continue;

    // Hashes this commit added per bucket: its new files minus the file they replaced.
    const byBucket = new Map<number, IndexManifestEntry[]>();
    for (const e of entries) byBucket.set(e.bucket, [...(byBucket.get(e.bucket) ?? []), e]);
    const added = new Map<number, Int32Array>();
    for (const [bucket, list] of byBucket) {
      const base = changes.entries.find(
        (d) => d.kind === 'DELETE' && d.indexType === INDEX_TYPE_HASH && d.bucket === bucket && partitionKey(d.partition) === part,
      );
      const old = base === undefined ? new Set<number>() : new Set(await readHashes(fileIO, paths, base));
      const fresh = new Set<number>();
      for (const e of list) for (const h of await readHashes(fileIO, paths, e)) if (!old.has(h)) fresh.add(h);
      added.set(bucket, Int32Array.from(fresh));
      if (list.length > 1) {
        // Several writers of this commit rewrote one bucket: one file with all their hashes (the
        // last ADD of a slot wins, so the others drop out).
        const all = new Set(old);
        for (const h of fresh) all.add(h);
        const last = list[list.length - 1]!;
        replaced.set(last, indexManifestEntryOf('ADD', last.partition, bucket, await write(Int32Array.from(all))));
        for (const e of list.slice(0, -1)) dropped.add(e);
      }
    }
    const addedAnywhere = new Map<number, number>();
    let collisions = 0;
    for (const [bucket, hashes] of added) {
      for (const h of hashes) {
        const other = addedAnywhere.get(h);
        if (other !== undefined && other !== bucket) collisions++;
        addedAnywhere.set(h, bucket);
      }
    }

    for (const other of changed) {
      const theirs = await readHashes(fileIO, paths, other);
      for (const h of theirs) {
        const b = addedAnywhere.get(h);
        if (b !== undefined && b !== other.bucket) collisions++;
      }
      const mine = byBucket.get(other.bucket)?.at(-1);
      if (mine === undefined || collisions > 0) continue;
      // Both rewrote this bucket's index: keep their hashes and add ours.
      const merged = new Set<number>(theirs);
      for (const h of added.get(other.bucket) ?? []) merged.add(h);
      const file = await write(Int32Array.from(merged));
      replaced.set(mine, indexManifestEntryOf('ADD', mine.partition, mine.bucket, file));
    }
    if (collisions > 0) conflicts.push({ partition: part, count: collisions });
  }
  if (conflicts.length > 0) {
    const total = conflicts.reduce((n, c) => n + c.count, 0);
    throw new DynamicBucketConflictError(
      `dynamic bucket conflict in ${paths.root}: ${total} key(s) this commit placed in new buckets are also in other buckets, placed by ` +
        'commits that landed since its bucket assignment or by another writer of this commit ' +
        `(latest snapshot ${latest?.id ?? '(none)'}); ` +
        're-plan the write against the latest snapshot',
      conflicts.map((c) => c.partition),
      total,
      latest?.id ?? null,
    );
  }
  return changes.entries.filter((e) => !dropped.has(e)).map((e) => replaced.get(e) ?? e);
}

/**
 * Checks that the deletion-vector changes of a commit still apply to `latest` (`delta`: the data
 * entries the same snapshot commits). Each commit rewrites whole DV files from its base snapshot,
 * so a DV file another commit replaced meanwhile would lose that commit's deletions:
 * - bucketed tables (one DV file per bucket): the bucket's live DV file must still be the one
 *   this commit replaces (or still none);
 * - bucket-unaware tables (DV files keyed by name): the files this commit replaces must still be
 *   live, and no other live DV file may hold a vector of a data file this commit writes one for;
 * - every data file this commit writes a vector for must be live in `latest` or added by `delta`.
 *
 * @throws DeletionVectorConflictError naming the bucket or data files.
 */
export async function checkDeletionVectorChanges(
  fileIO: FileIO,
  paths: FileStorePathFactory,
  latest: Snapshot | null,
  changes: readonly IndexManifestEntry[],
  delta: readonly {
    readonly kind: 'ADD' | 'DELETE';
    readonly partition: Uint8Array;
    readonly bucket: number;
    readonly file: { readonly fileName: string };
  }[],
  bucketUnaware: boolean,
  /** Where the manifests of `latest` are read from (the committer's cache); default: storage. */
  source?: ManifestSource,
): Promise<void> {
  const ours = changes.filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS);
  if (ours.length === 0) return;
  const latestId = latest?.id ?? null;
  const parts = new Set(ours.map((e) => partitionKey(e.partition)));
  const live = (await snapshotIndexEntries(fileIO, paths, latest)).filter(
    (e) => e.indexType === INDEX_TYPE_DELETION_VECTORS && parts.has(partitionKey(e.partition)),
  );
  const conflict = (what: string, files: string[]): never => {
    throw new DeletionVectorConflictError(
      `deletion vector conflict in ${paths.root}: ${what} (latest snapshot ${latestId ?? '(none)'}); ` +
        'another commit changed the same deletion vectors meanwhile; plan the change again against the latest snapshot',
      files,
      latestId,
    );
  };
  const deleted = new Set(ours.filter((e) => e.kind === 'DELETE').map((e) => e.fileName));
  if (!bucketUnaware) {
    const slots = new Map<string, { partition: Uint8Array; bucket: number; expected: string | null }>();
    for (const e of ours) {
      const k = `${partitionKey(e.partition)}|${e.bucket}`;
      const slot = slots.get(k) ?? { partition: e.partition, bucket: e.bucket, expected: null };
      if (e.kind === 'DELETE') slot.expected = e.fileName;
      slots.set(k, slot);
    }
    for (const [k, slot] of slots) {
      const actual = live.find((e) => `${partitionKey(e.partition)}|${e.bucket}` === k)?.fileName ?? null;
      if (actual !== slot.expected) {
        conflict(
          `the deletion vectors of bucket ${slot.bucket} are in '${actual ?? '(none)'}', but this commit replaces '${slot.expected ?? '(none)'}'`,
          actual === null ? [] : [actual],
        );
      }
    }
  } else {
    const liveNames = new Set(live.map((e) => e.fileName));
    const gone = [...deleted].filter((n) => !liveNames.has(n));
    if (gone.length > 0) conflict(`DV index files this commit replaces are no longer live: ${gone.join(', ')}`, gone);
    const covered = new Map<string, string>();
    for (const e of live) if (!deleted.has(e.fileName)) for (const r of e.dvRanges ?? []) covered.set(r.dataFileName, e.fileName);
    const twice = ours
      .filter((e) => e.kind === 'ADD')
      .flatMap((e) => (e.dvRanges ?? []).map((r) => r.dataFileName))
      .filter((n) => covered.has(n));
    if (twice.length > 0) conflict(`data files already have deletion vectors in another DV index file: ${twice.join(', ')}`, twice);
  }
  // Vectors of files that are gone would hide nothing, while the rows they meant to delete live
  // on in whatever replaced those files.
  const named = ours
    .filter((e) => e.kind === 'ADD')
    .flatMap((e) => (e.dvRanges ?? []).map((r) => `${partitionKey(e.partition)}|${e.bucket}|${r.dataFileName}`));
  if (named.length === 0) return;
  const liveData = new Set<string>();
  if (latest !== null) {
    for (const e of (await liveEntries(fileIO, paths, latest, (p) => parts.has(partitionKey(p)), source)).values()) {
      liveData.add(`${partitionKey(e.partition)}|${e.bucket}|${e.file.fileName}`);
    }
  }
  for (const e of delta) {
    const k = `${partitionKey(e.partition)}|${e.bucket}|${e.file.fileName}`;
    if (e.kind === 'ADD') liveData.add(k);
  }
  for (const e of delta)
    if (e.kind === 'DELETE' && !delta.some((a) => a.kind === 'ADD' && a.file.fileName === e.file.fileName))
      liveData.delete(`${partitionKey(e.partition)}|${e.bucket}|${e.file.fileName}`);
  const dead = named.filter((k) => !liveData.has(k));
  if (dead.length > 0) {
    const names = dead.map((k) => k.slice(k.lastIndexOf('|') + 1));
    conflict(`this commit marks rows of data files that are no longer live: ${names.join(', ')}`, names);
  }
}
