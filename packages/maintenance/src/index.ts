/**
 * `@tidemark/maintenance`: jobs that keep a table healthy, for cron or Kubernetes. Snapshot
 * expiration runs after commits too, so its engine and the shared job types live in
 * `@tidemark/core` and are re-exported here; orphan cleanup and compaction live in this package.
 */
export {
  DataFileLocator,
  MaintenanceAbortedError,
  MaintenanceArgumentError,
  MaintenanceError,
  expireSnapshots,
  expireChangelogs,
  type ExpireChangelogsOptions,
  type ExpireChangelogsSummary,
  type ExpireSnapshotsOptions,
  type ExpireSnapshotsSummary,
  type MaintainedTable,
  type MaintenanceProgress,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from '@tidemark/core';
export {
  DEFAULT_EXPIRING_SNAPSHOT_WAIT_MS,
  DEFAULT_IN_PROGRESS_GRACE_MS,
  DEFAULT_ORPHAN_OLDER_THAN_MS,
  OrphanCleanupStoppedError,
  TEMP_FILE_MIN_AGE_MS,
  removeOrphanFiles,
  type RemoveOrphanFilesOptions,
  type RemoveOrphanFilesSummary,
} from './remove-orphan-files.js';
export {
  DEFAULT_COMPACT_MAX_FILES_PER_RUN,
  compactAppendTable,
  type CompactAppendOptions,
  type CompactAppendSummary,
  type CompactGaveUp,
  type CompactProgress,
  type CompactWindowPlan,
} from './compact-append.js';
export { compactManifests, type CompactManifestsOptions, type CompactManifestsSummary } from './compact-manifests.js';
export { compactPickOptions, pickCompactWindows, type CompactCandidate, type CompactPickOptions } from './compact-plan.js';
export {
  DEFAULT_REPORT_PARTITIONS,
  DEFAULT_TIMELINE_LIMIT,
  inspectTable,
  type InspectPhase,
  type InspectTableOptions,
} from './inspect-table.js';
export { FILE_SIZE_BIN_COUNT, fileSizeBins, type FileSizeBin } from './file-size-bins.js';
export {
  TABLE_REPORT_VERSION,
  type BucketSize,
  type BucketSkew,
  type CompactionPlan,
  type ExpirePlan,
  type FileSizeReport,
  type JobNotPlanned,
  type LiveFilesReport,
  type MaintenanceOutlook,
  type ManifestCompactionPlan,
  type ManifestReport,
  type OrphanPlan,
  type PartitionReport,
  type SnapshotTimeline,
  type TableReport,
  type TimelineSnapshot,
} from './table-report.js';

// ---- used by the write path of primary-key tables, dynamic buckets and integrity checks ----
export { type CompactPrimaryKeySummary, compactPrimaryKeyTable } from './compact-primary-key.js';
export { verifyTable, type VerifyOptions, type VerifyProblem, type VerifySummary } from './verify-table.js';
