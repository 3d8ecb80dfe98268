import { TidemarkError, TidemarkUserError } from '../errors.js';

/** A primary-key compaction could not be planned or carried out (the table is left as it was). */
export class CompactionError extends TidemarkError {}

/** A compaction was asked for something the table or its options do not allow. */
export class CompactionArgumentError extends TidemarkUserError {}

/** A compaction was stopped by its abort signal; nothing it wrote is committed. */
export class CompactionAbortedError extends TidemarkError {}
