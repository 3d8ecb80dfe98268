/** Branch name rules (Java's `BranchManager.validateBranch`, plus what a directory name needs). */
import { MAIN_BRANCH } from '../table-paths.js';
import { InvalidBranchNameError } from './branch-errors.js';

/** True for the default branch (`main`), whose metadata is the table root itself. */
export function isMainBranch(branch: string | undefined | null): boolean {
  return branch === undefined || branch === null || branch === MAIN_BRANCH;
}

/**
 * Checks a name for a new branch as Java does: not `main` (the default branch), not blank, not
 * purely numeric (it would read like a snapshot id). It also becomes the directory
 * `branch/branch-<name>`, so it may not contain `/` or `\`, start with `.` or hold control characters.
 *
 * @throws InvalidBranchNameError saying which rule the name breaks.
 */
export function validateBranchName(name: string): void {
  if (typeof name !== 'string' || name.trim() === '')
    throw new InvalidBranchNameError(`branch name must not be blank, but is '${String(name)}'`);
  if (name === MAIN_BRANCH) throw new InvalidBranchNameError(`branch name '${MAIN_BRANCH}' is the default branch and cannot be used`);
  checkBranchNameChars(name);
}

/**
 * Checks the name of an existing branch a caller wants to address (`main` included): the rules
 * of {@link validateBranchName} that keep it inside `branch/`.
 *
 * @throws InvalidBranchNameError
 */
export function checkBranchReference(name: string): void {
  if (typeof name !== 'string' || name.trim() === '')
    throw new InvalidBranchNameError(`branch name must not be blank, but is '${String(name)}'`);
  if (name !== MAIN_BRANCH) checkBranchNameChars(name);
}

function checkBranchNameChars(name: string): void {
  if (/^\d+$/.test(name)) throw new InvalidBranchNameError(`branch name cannot be a pure number, but is '${name}'`);
  if (name.includes('/') || name.includes('\\')) throw new InvalidBranchNameError(`branch name '${name}' must not contain '/' or '\\'`);
  if (name.startsWith('.')) throw new InvalidBranchNameError(`branch name '${name}' must not start with '.'`);
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw new InvalidBranchNameError(`branch name ${JSON.stringify(name)} must not contain control characters`);
}
