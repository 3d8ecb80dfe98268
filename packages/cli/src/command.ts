/**
 * The shape every `tidemark` subcommand module exports, and the exit codes they map to.
 */
import type { CommandUsage, OptionSpecs, ParsedArgs } from './args.js';
import type { CommandContext } from './context.js';

/** Process exit codes of `tidemark`. */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** The command failed (I/O, corrupt data, missing snapshot, ...). */
  Failed: 1,
  /** The command line was wrong; a usage message was printed. */
  Usage: 2,
  /** Stopped by Ctrl-C (128 + SIGINT), after cleaning up. */
  Interrupted: 130,
  /** A second SIGTERM to a command that stops gracefully: ended at once (128 + SIGTERM). */
  Terminated: 143,
} as const;

/** One subcommand: its name, one-line summary, argument declaration and implementation. */
export interface Command<S extends OptionSpecs = OptionSpecs> {
  readonly name: string;
  /** One line for `tidemark --help`. */
  readonly summary: string;
  readonly usage: CommandUsage<S>;
  /**
   * The command stops cleanly when `ctx.signal` aborts and says so itself (long-running services
   * such as `ingest`): SIGTERM then aborts the signal as Ctrl-C does, instead of ending the
   * process, and {@link main} prints nothing when either arrives. A second signal ends the
   * process at once.
   */
  readonly stopsGracefully?: boolean;
  /**
   * Runs the command with already-validated arguments. Returns the exit code (undefined = 0).
   * Throw {@link UsageError} for argument problems found late (exit 2) and errors with
   * `userError = true` for problems the user can fix (exit 1, one-line message).
   */
  run(args: ParsedArgs<S>, ctx: CommandContext): Promise<number | void>;
}

/** Identity helper that infers the option types of a command from its declaration. */
export function defineCommand<const S extends OptionSpecs>(command: Command<S>): Command<S> {
  return command;
}
