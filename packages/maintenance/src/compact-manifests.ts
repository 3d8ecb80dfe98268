/**
 * Full manifest compaction, as Paimon's `compact_manifest` procedure
 * (`FileStoreCommitImpl.compactManifest`): the manifests of the latest snapshot (base + delta) are
 * merged with a full-compaction threshold of one byte and a merge-min-count of one, so every
 * manifest that is small or holds DELETE entries is rewritten into manifests holding only the
 * surviving ADD entries. The result is committed as a COMPACT snapshot whose base list is the
 * merged set and whose delta is empty; the live file set and the record count are unchanged.
 */
import { randomUUID } from 'node:crypto';
import { checkAborted, dataManifests, fullCompactionBaseLength, tableOptions, type Table } from '@tidemark/core';

/** Options of {@link compactManifests}. */
export interface CompactManifestsOptions {
  /** Commit user of the COMPACT snapshot (default a fresh UUID). */
  readonly commitUser?: string;
  /** Report what would be merged; write nothing. */
  readonly dryRun?: boolean;
  /** Checked before committing. */
  readonly signal?: AbortSignal;
}

/** Result of {@link compactManifests}. */
export interface CompactManifestsSummary {
  /** Data manifests of the snapshot the run started from (base + delta). */
  readonly manifestsBefore: number;
  /** Data manifests of the new snapshot (equal to `manifestsBefore` when nothing was done). */
  readonly manifestsAfter: number;
  /** Manifests that must be rewritten (small ones, ones with DELETE entries, and all after them). */
  readonly manifestsToMerge: number;
  /** The new COMPACT snapshot, or null when there was nothing to merge (or a dry run). */
  readonly snapshotId: number | null;
  readonly durationMs: number;
  readonly dryRun: boolean;
}

/**
 * Rewrites the latest snapshot's manifests into the minimal set and commits it as a COMPACT
 * snapshot with an empty delta. Commits racing it are handled by the normal commit retry loop:
 * each attempt merges the manifests of the then-latest snapshot.
 */
export async function compactManifests(table: Table, options: CompactManifestsOptions = {}): Promise<CompactManifestsSummary> {
  const started = Date.now();
  const dryRun = options.dryRun ?? false;
  const latest = await table.snapshotManager.latest();
  if (latest === null) {
    return { manifestsBefore: 0, manifestsAfter: 0, manifestsToMerge: 0, snapshotId: null, durationMs: Date.now() - started, dryRun };
  }
  const schema = await table.schemaManager.latest();
  const target = tableOptions(schema).manifestTargetFileSize;
  const before = await dataManifests(table.fileIO, table.paths, latest);
  const toMerge = before.slice(fullCompactionBaseLength(before, target));
  // One small manifest without deletes would only be copied; Paimon also skips unchanged results.
  const nothing = toMerge.length === 0 || (toMerge.length === 1 && toMerge[0]!.numDeletedFiles === 0);
  if (nothing || dryRun) {
    return {
      manifestsBefore: before.length,
      manifestsAfter: before.length,
      manifestsToMerge: nothing ? 0 : toMerge.length,
      snapshotId: null,
      durationMs: Date.now() - started,
      dryRun,
    };
  }
  checkAborted(options.signal);
  const commit = table.newCommit({
    commitUser: options.commitUser ?? randomUUID(),
    commitOptions: { manifestFullCompactionThresholdSize: 1, manifestMergeMinCount: 1 },
  });
  const result = await commit.commit({ messages: [] }, { kind: 'COMPACT', force: true });
  if (result.status !== 'committed') {
    return {
      manifestsBefore: before.length,
      manifestsAfter: before.length,
      manifestsToMerge: toMerge.length,
      snapshotId: null,
      durationMs: Date.now() - started,
      dryRun,
    };
  }
  const after = await dataManifests(table.fileIO, table.paths, await table.snapshotManager.snapshot(result.snapshotId));
  return {
    manifestsBefore: before.length,
    manifestsAfter: after.length,
    manifestsToMerge: toMerge.length,
    snapshotId: result.snapshotId,
    durationMs: Date.now() - started,
    dryRun,
  };
}
