/**
 * What a command receives besides its arguments: the streams to write to, the abort signal
 * raised by Ctrl-C, and the environment. Tests build one with {@link createContext} and
 * in-memory streams; the binary uses the process's own.
 */
import type { Readable, Writable } from 'node:stream';

/** The environment a command runs in. Commands never touch `process.stdout` etc. directly. */
export interface CommandContext {
  /** Where results go (rows, JSON summaries). */
  readonly stdout: Writable;
  /** Where diagnostics, warnings and progress bars go. */
  readonly stderr: Writable;
  /** Input for `write --input -`. */
  readonly stdin: Readable;
  /** Aborted on the first Ctrl-C (SIGINT); long jobs check it between steps and stop cleanly. */
  readonly signal: AbortSignal;
  /** Environment variables (read `TIDEMARK_*` settings from here, not from `process.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Working directory relative table paths resolve against. */
  readonly cwd: string;
  /** True when stderr is a terminal, i.e. progress bars may be drawn. */
  readonly stderrIsTTY: boolean;
  /** Current time in epoch ms; injectable so `--older-than 1d` is testable. */
  now(): number;
}

/** Fills the parts of a context a caller did not give from the current process. */
export function createContext(partial: Partial<CommandContext> = {}): CommandContext {
  const stderr = partial.stderr ?? process.stderr;
  return {
    stdout: partial.stdout ?? process.stdout,
    stderr,
    // A getter: touching process.stdin opens a handle, which only `write --input -` needs.
    get stdin() {
      return partial.stdin ?? process.stdin;
    },
    signal: partial.signal ?? new AbortController().signal,
    env: partial.env ?? process.env,
    cwd: partial.cwd ?? process.cwd(),
    stderrIsTTY: partial.stderrIsTTY ?? (stderr as { isTTY?: boolean }).isTTY === true,
    now: partial.now ?? Date.now,
  };
}
