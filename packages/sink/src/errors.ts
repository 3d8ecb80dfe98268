/**
 * Error classes of `@tidemark/sink`. All extend {@link SinkError}; the CLI prints errors with
 * `userError = true` as one line (no stack trace).
 */
import { TidemarkError } from '@tidemark/core';

/** Base class of every error raised by the sink package. */
export class SinkError extends TidemarkError {
  override readonly userError: boolean = true;
}

/** A checkpoint state that does not belong to this pipeline's table or source. */
export class StateMismatchError extends SinkError {}

/** A checkpoint state file that exists but cannot be decoded. */
export class CorruptStateError extends SinkError {}

/**
 * The table already holds a commit identifier of this commitUser that is newer than what the
 * pipeline is about to commit: the state is older than the table (restored from an old checkpoint,
 * or two pipelines share a commitUser). Continuing would silently skip data.
 */
export class IdentifierRegressionError extends SinkError {}

/** A pending committable names a data file that no longer exists. */
export class MissingDataFileError extends SinkError {
  constructor(
    message: string,
    /** Locations of the missing files. */
    readonly files: readonly string[],
  ) {
    super(message);
  }
}

/** The same checkpoint's files would be committed twice. */
export class DuplicateCommitError extends SinkError {}

/** A replayable source that cannot be opened or read at the requested offset. */
export class SourceError extends SinkError {}

/** A source record the table cannot take (a value of the wrong type, NULL in a NOT NULL column …); names its source position. */
export class SourceRecordError extends SinkError {}

/** Wrong use of the sink API (e.g. checkpoint ids that do not increase). */
export class SinkUsageError extends SinkError {}

/**
 * A sink writer was given a record of a bucket another writer of the pipeline owns: a bug in
 * routing, reported before two writers could compact the same bucket.
 */
export class WriterRoutingError extends SinkError {
  override readonly userError: boolean = false;
}
