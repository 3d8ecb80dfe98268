/**
 * Errors of the maintenance jobs (snapshot expiration here; orphan cleanup and compaction in
 * `@tidemark/maintenance`, which re-exports these classes). They live in core because commits run
 * expiration automatically; both packages throw the very same classes, so `instanceof` works
 * whichever package a caller imports them from.
 */
import { TidemarkError, TidemarkUserError } from '../errors.js';

/** Base class of maintenance failures (reading metadata, deleting files). */
export class MaintenanceError extends TidemarkError {}

/** Invalid job arguments (retain counts, a threshold in the future …). */
export class MaintenanceArgumentError extends TidemarkUserError {}

/** The job was stopped through its AbortSignal; what was done so far is consistent. */
export class MaintenanceAbortedError extends MaintenanceError {
  constructor(reason?: unknown) {
    super('maintenance job aborted; nothing half-done is visible, rerun to finish', reason === undefined ? undefined : { cause: reason });
  }
}
