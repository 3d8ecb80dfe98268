/**
 * Errors of `@tidemark/maintenance`. All extend the core package's {@link TidemarkError}, so front
 * ends can tell user mistakes (`userError`) from failures.
 */
import { TidemarkError, TidemarkUserError } from '@tidemark/core';

/** Base class of maintenance failures (reading metadata, deleting files). */
export class MaintenanceError extends TidemarkError {}

/** Invalid job arguments (retain counts, a threshold in the future …). */
export class MaintenanceArgumentError extends TidemarkUserError {}
