/**
 * Shared pieces of the maintenance jobs. Everything snapshot expiration needs is defined in
 * `@tidemark/core` (`expire/table-files.ts`, because commits run expiration) and re-exported here
 * unchanged; only what the other jobs alone use is defined in this module.
 */
export {
  DataFileLocator,
  MaintenanceAbortedError,
  checkAborted,
  latestSchema,
  manifestListNames,
  tryReadIndexManifest,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceProgress,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from '@tidemark/core';

/** The file name part of a location. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
