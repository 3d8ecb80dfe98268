/**
 * Errors of `@tidemark/maintenance`. All extend the core package's `TidemarkError`, so front ends
 * can tell user mistakes (`userError`) from failures. The classes are defined in `@tidemark/core`
 * (commits run snapshot expiration automatically) and re-exported here unchanged, so `instanceof`
 * holds whichever package they are imported from.
 */
export { MaintenanceError, MaintenanceArgumentError } from '@tidemark/core';
