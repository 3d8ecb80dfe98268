/**
 * Error classes of the `tidemark` CLI and the rule that decides how an error is reported.
 *
 * A *user error* is one the person at the terminal can fix (bad option, missing snapshot, corrupt
 * file): it is printed as one line without a stack trace. Anything else is a bug or an environment
 * failure and prints its stack when `TIDEMARK_DEBUG=1`.
 */

/** Base class of every error raised by the CLI itself; all of them are user errors. */
export class CliError extends Error {
  /** Marks the error as fixable by the user, so it is printed without a stack trace. */
  readonly userError = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command line: unknown option, missing value, conflicting options. Exit code 2. */
export class UsageError extends CliError {
  /** Name of the command whose usage should be printed, when known. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** The run was interrupted (Ctrl-C) and stopped before finishing. */
export class InterruptedError extends CliError {
  constructor(message = 'interrupted') {
    super(message);
  }
}

/**
 * Names of the error base classes of the other tidemark packages whose errors are the user's to
 * fix (`TidemarkError` covers core, maintenance and sink). Matched by class name along the
 * prototype chain, so classifying errors needs no import of every package.
 */
const userErrorBaseNames = new Set<string>(['FormatError', 'StorageError', 'TidemarkError']);

/**
 * True when `err` should be reported as a one-line message: it (or its class) has
 * `userError === true`, or one of its classes is a user-error base named above, or it is an
 * AbortError raised because the user pressed Ctrl-C.
 */
export function isUserError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { userError?: unknown }).userError === true) return true;
  if ((err as { name?: unknown }).name === 'AbortError') return true;
  for (let proto = Object.getPrototypeOf(err) as object | null; proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    const ctor = (proto as { constructor?: { name?: string } }).constructor;
    if (ctor?.name && userErrorBaseNames.has(ctor.name)) return true;
  }
  return false;
}
