/**
 * Conflict detection for commits that delete files (compaction, overwrite, row-level changes):
 * every file the commit deletes must still be live in the latest snapshot (docs/format.md, "Commit protocol").
 * Appends never conflict with appends, so pure appends skip this check.
 */
import type { FileIO } from '@tidemark/storage';
import { fileEntryIdentity, type ManifestEntry, type Snapshot } from '@tidemark/format';
import type { TablePaths } from '../table-paths.js';
import { CommitConflictError } from './commit-errors.js';
import { liveEntries, partitionKey } from './manifest-fold.js';
import type { ManifestSource } from './metadata-cache.js';

export interface ConflictCheckOptions {
  /** Skip the "bucket count per partition unchanged" check (overwrite may change the bucket count). */
  readonly allowBucketChange?: boolean;
  /** Where manifests are read from (a committer's cache, so a retry re-reads only new manifests); default: storage. */
  readonly source?: ManifestSource;
}

/**
 * Checks `delta` against `latest` (null = empty table). Only the live files of the partitions the
 * delta touches are read.
 *
 * @throws CommitConflictError naming the files when a deleted file is no longer live, the delta
 *   adds and deletes the same file, adds or deletes one file twice, adds a file that is already
 *   live, or changes a partition's bucket count.
 */
export async function checkConflicts(
  fileIO: FileIO,
  paths: TablePaths,
  latest: Snapshot | null,
  delta: readonly ManifestEntry[],
  options: ConflictCheckOptions = {},
): Promise<void> {
  const latestId = latest?.id ?? null;
  // Two compactions of one bucket in one commit (e.g. two writers sharing it) name the same input:
  // folding a file out twice, or in twice, writes metadata every reader refuses as corrupt.
  const seen = { ADD: new Set<string>(), DELETE: new Set<string>() };
  const twice = delta.filter((e) => {
    const id = fileEntryIdentity(e);
    const set = seen[e.kind];
    if (set.has(id)) return true;
    set.add(id);
    return false;
  });
  if (twice.length > 0) {
    throw new CommitConflictError(
      `the commit ${twice[0]!.kind === 'ADD' ? 'adds' : 'deletes'} the same files more than once (two writers or compactions on one bucket?)`,
      twice.map((e) => e.file.fileName),
      latestId,
    );
  }
  const added = seen.ADD;
  const both = delta.filter((e) => e.kind === 'DELETE' && added.has(fileEntryIdentity(e)));
  if (both.length > 0) {
    throw new CommitConflictError(
      'the commit both adds and deletes the same files',
      both.map((e) => e.file.fileName),
      latestId,
    );
  }

  const partitions = new Set(delta.map((e) => partitionKey(e.partition)));
  const live =
    latest === null
      ? new Map<string, ManifestEntry>()
      : await liveEntries(fileIO, paths, latest, (p) => partitions.has(partitionKey(p)), options.source);

  if (!options.allowBucketChange) {
    const buckets = new Map<string, number>();
    for (const e of live.values()) buckets.set(partitionKey(e.partition), e.totalBuckets);
    const changed = delta.filter((e) => {
      const b = buckets.get(partitionKey(e.partition));
      return e.kind === 'ADD' && b !== undefined && b !== e.totalBuckets;
    });
    if (changed.length > 0) {
      const e = changed[0]!;
      throw new CommitConflictError(
        `total bucket count changed: the table's partition holds files written with ${buckets.get(partitionKey(e.partition))} buckets, the commit adds files written with ${e.totalBuckets}; rescale with an overwrite`,
        changed.map((x) => x.file.fileName),
        latestId,
      );
    }
  }

  const missing = delta.filter((e) => e.kind === 'DELETE' && !live.has(fileEntryIdentity(e)));
  if (missing.length > 0) {
    throw new CommitConflictError(
      `file deletion conflict: the commit deletes files that are no longer live in snapshot ${latestId ?? '(none)'} (a concurrent commit deleted or rewrote them); re-plan against the latest snapshot`,
      missing.map((e) => e.file.fileName),
      latestId,
    );
  }
  const dup = delta.filter((e) => e.kind === 'ADD' && live.has(fileEntryIdentity(e)));
  if (dup.length > 0) {
    throw new CommitConflictError(
      `the commit adds files that are already live in snapshot ${latestId}`,
      dup.map((e) => e.file.fileName),
      latestId,
    );
  }
}
