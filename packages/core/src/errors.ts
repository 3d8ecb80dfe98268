/**
 * Error classes of `@tidemark/core`. Every error thrown by this package for a core-level problem
 * extends {@link TidemarkError}; errors caused by the user's input (unknown snapshot, tag, bad
 * predicate …) carry `userError = true` so front ends print only the message, never a stack trace.
 */

/** Base class of every error raised by the core package. */
export class TidemarkError extends Error {
  /** True when the error is caused by user input (print the message only, no stack trace). */
  readonly userError: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Base class of errors caused by user input; see {@link TidemarkError.userError}. */
export class TidemarkUserError extends TidemarkError {
  override readonly userError: boolean = true;
}

/** Describes the available snapshot range for error messages. */
function describeRange(earliest: number | null, latest: number | null): string {
  if (earliest === null || latest === null) return 'the table has no snapshots';
  return `earliest is ${earliest}, latest is ${latest}`;
}

/** A snapshot id was requested that does not exist (never written, or expired). */
export class SnapshotNotFoundError extends TidemarkUserError {
  constructor(
    readonly snapshotId: number,
    readonly earliestId: number | null,
    readonly latestId: number | null,
    options?: { cause?: unknown },
  ) {
    super(`snapshot ${snapshotId} does not exist; ${describeRange(earliestId, latestId)}`, options);
  }
}

/** A tag name was requested that does not exist. */
export class TagNotFoundError extends TidemarkUserError {
  constructor(
    readonly tagName: string,
    /** Names of the existing tags (possibly only the first few). */
    readonly availableTags: readonly string[],
    /** Total number of existing tags. */
    readonly totalTags: number = availableTags.length,
    options?: { cause?: unknown },
  ) {
    let list: string;
    if (totalTags === 0) list = 'the table has no tags';
    else {
      const shown = availableTags.map((t) => `'${t}'`).join(', ');
      const more = totalTags > availableTags.length ? ` and ${totalTags - availableTags.length} more` : '';
      list = `available tags: ${shown}${more}`;
    }
    super(`tag '${tagName}' does not exist; ${list}`, options);
  }
}

/** A time-travel request cannot be resolved (timestamp before the first snapshot, conflicting selectors …). */
export class TimeTravelError extends TidemarkUserError {}

/** A schema file `schema/schema-<id>` is missing. */
export class SchemaNotFoundError extends TidemarkUserError {
  constructor(
    readonly schemaId: number,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`schema ${schemaId} does not exist: ${path} not found`, options);
  }
}

/** The location is not a table (no `schema/schema-<n>` file under it). */
export class TableNotFoundError extends TidemarkUserError {
  constructor(
    readonly location: string,
    detail?: string,
    options?: { cause?: unknown },
  ) {
    super(`no table at ${location}${detail ? `: ${detail}` : ''}`, options);
  }
}

/** A filter predicate cannot be parsed or does not fit the table's columns and types. */
export class PredicateError extends TidemarkUserError {}

/** A consumer id that cannot name a file, or a consumer file that is not Paimon's consumer JSON. */
export class ConsumerError extends TidemarkUserError {}

/** A streaming read cannot start where it was asked (expired snapshot, unknown start). */
export class StreamStartError extends TidemarkUserError {}
