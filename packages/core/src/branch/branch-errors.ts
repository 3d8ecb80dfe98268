/** Errors of branch management (`branch/branch-<name>/`). */
import { TidemarkUserError } from '../errors.js';

/** A branch name Paimon refuses (`main`, blank, purely numeric) or one that cannot name a directory. */
export class InvalidBranchNameError extends TidemarkUserError {}

/** The branch asked for does not exist; the message lists the ones that do. */
export class BranchNotFoundError extends TidemarkUserError {
  constructor(
    readonly branch: string,
    readonly location: string,
    /** Names of the existing branches (other than main). */
    readonly available: readonly string[],
  ) {
    super(
      `branch '${branch}' does not exist in table ${location}; ${
        available.length === 0 ? 'the table has no branches besides main' : `branches: ${available.map((b) => `'${b}'`).join(', ')}`
      } (create one with 'tidemark branch create')`,
    );
  }
}

/** A branch of that name exists already. */
export class BranchAlreadyExistsError extends TidemarkUserError {
  constructor(
    readonly branch: string,
    detail = '',
  ) {
    super(`branch '${branch}' already exists${detail}; delete it first or choose another name`);
  }
}

/** A branch operation that cannot be done in the table's current state (e.g. fast-forward of a branch without snapshots). */
export class BranchStateError extends TidemarkUserError {}
