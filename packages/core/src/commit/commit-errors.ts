/**
 * Errors raised by the commit path, tags and rollback.
 */
import { TidemarkError, TidemarkUserError } from '../errors.js';
import { CorruptTableError } from '../scan/errors.js';

/** How many file names a conflict message lists before summarising the rest. */
const MAX_LISTED_FILES = 10;

function listFiles(files: readonly string[]): string {
  const shown = files
    .slice(0, MAX_LISTED_FILES)
    .map((f) => `'${f}'`)
    .join(', ');
  return files.length > MAX_LISTED_FILES ? `${shown} and ${files.length - MAX_LISTED_FILES} more` : shown;
}

/**
 * A commit cannot be applied on top of the current table state (e.g. it deletes files that a
 * concurrent commit already deleted). Nothing of the failed commit is visible. Retrying the same
 * commit cannot succeed: the writer must re-plan against the new latest snapshot.
 */
export class CommitConflictError extends TidemarkError {
  /** The user resolves it by re-running against the new state (or stopping the other writer). */
  override readonly userError: boolean = true;

  constructor(
    message: string,
    /** Data files involved in the conflict. */
    readonly files: readonly string[] = [],
    /** Snapshot the commit was checked against. */
    readonly latestSnapshotId: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(files.length > 0 ? `${message}: ${listFiles(files)}` : message, options);
  }
}

/**
 * The commit lost the snapshot race more often than `commit.max-retries` allows, or ran past
 * `commit.timeout`. Not a user error: it points at heavy contention or a misbehaving store.
 */
export class CommitRetryExhaustedError extends TidemarkError {}

/** Invalid commit input (bad identifiers, files outside an overwrite spec, bad option values …). */
export class CommitInputError extends TidemarkUserError {}

/**
 * True for commit errors raised before anything was published: the commit's data files are
 * referenced by no snapshot and may be deleted. False for anything else, including errors whose
 * outcome is unknown (a lost reply to the snapshot create, an I/O failure).
 */
export function commitNotApplied(e: unknown): boolean {
  return e instanceof CommitInputError || e instanceof CommitConflictError || e instanceof CorruptTableError;
}

/** A tag with that name already exists. */
export class TagAlreadyExistsError extends TidemarkUserError {
  constructor(
    readonly tagName: string,
    readonly snapshotId: number | null,
  ) {
    super(
      `tag '${tagName}' already exists${snapshotId === null ? '' : ` (it points at snapshot ${snapshotId})`}; delete it first or choose another name`,
    );
  }
}

/** A rollback is refused (a tag points at a later snapshot, the target does not exist …). */
export class RollbackError extends TidemarkUserError {}
