/**
 * Snapshot expiration with Java Paimon's semantics and defaults (paimon-format.md §8). The engine
 * lives in `@tidemark/core` (`expire/expire-snapshots.ts`) because commits run it automatically,
 * as Paimon does; it is re-exported here unchanged for maintenance jobs and the CLI.
 */
export { expireSnapshots, type ExpireSnapshotsOptions, type ExpireSnapshotsSummary } from '@tidemark/core';
