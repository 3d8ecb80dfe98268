/**
 * Error classes of the `tidemark` CLI and the rule that decides how an error is reported.
 *
 * A *user error* is one the person at the terminal can fix (bad option, missing snapshot, bad
 * credentials): it is printed as one line without a stack trace. Anything else (a corrupt table, a
 * reset connection, a bug) is reported as unexpected and prints its stack when `TIDEMARK_DEBUG=1`.
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

/** The run was interrupted (Ctrl-C, or SIGTERM for a command that stops gracefully) and stopped before finishing. */
export class InterruptedError extends CliError {
  constructor(
    message = 'interrupted',
    /** The signal that interrupted it. */
    readonly signal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
  ) {
    super(message);
  }
}

/** A report file (`inspect --html`) could not be written; the message names the file. */
export class ReportFileError extends CliError {}

/**
 * True when `err` should be reported as a one-line message: it carries `userError === true` (every
 * tidemark error class sets the flag for itself: input, configuration and state the user can fix),
 * or it is an AbortError raised because the user pressed Ctrl-C. Everything else (corrupt tables,
 * exhausted commit retries, connection resets, bugs) is reported as unexpected.
 */
export function isUserError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { name?: unknown }).name === 'AbortError') return true;
  return (err as { userError?: unknown }).userError === true;
}
