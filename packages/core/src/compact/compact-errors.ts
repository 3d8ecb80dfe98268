import { TidemarkError } from '../errors.js';

/** A primary-key compaction could not be planned or carried out (the table is left as it was). */
export class CompactionError extends TidemarkError {}

/** A compaction was stopped by its abort signal; nothing it wrote is committed. */
export class CompactionAbortedError extends TidemarkError {}
