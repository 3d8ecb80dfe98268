/**
 * Running the CLI in this process through `main()`, with stdout and stderr captured as text: for
 * suites that check what a command prints without paying a child process start-up per command
 * (test/support/cli-process.ts runs the built binary instead, where the exit itself is under test).
 */
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { main, type MainOptions } from '@tidemark/cli';
import { cliS3Variables, s3TestEnv } from './s3.js';

/** A writable stream that keeps everything written to it as one string. */
export class TextCapture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

/** What one `main()` call returned and printed. */
export interface MainResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Context for {@link runMain}: any part of `main()`'s options, and stdin as text. */
export interface RunMainOptions extends Omit<MainOptions, 'stdout' | 'stderr' | 'stdin'> {
  /** The command's standard input; without it the command gets the context default. */
  readonly stdin?: string;
}

/**
 * Runs `tidemark <argv>` through `main()` with an empty environment (no `TIDEMARK_*` setting of the
 * developer's shell leaks in) and a signal of its own, unless `options` give them.
 */
export async function runMain(argv: readonly string[], options: RunMainOptions = {}): Promise<MainResult> {
  const { stdin, ...rest } = options;
  const stdout = new TextCapture();
  const stderr = new TextCapture();
  const code = await main(argv, {
    signal: new AbortController().signal,
    env: {},
    ...rest,
    stdout,
    stderr,
    ...(stdin !== undefined ? { stdin: Readable.from([stdin]) } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/**
 * Sets `variables` in `process.env` (an `undefined` value removes one) and returns the function that
 * puts back what was there: the CLI resolves S3 from the process environment, as a user's shell sets it.
 */
export function setProcessEnv(variables: Record<string, string | undefined>): () => void {
  const saved = Object.keys(variables).map((k) => [k, process.env[k]] as const);
  for (const [k, v] of Object.entries(variables)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/**
 * For the whole file: points `main()` at the test S3 server (when one is configured) before the
 * first test and restores the environment after the last.
 */
export function useCliS3Env(): void {
  let restore = (): void => undefined;
  beforeAll(() => {
    const env = s3TestEnv();
    if (env) restore = setProcessEnv(cliS3Variables(env));
  });
  afterAll(() => restore());
}

/**
 * {@link runMain} as the progress suites drive it: stderr a terminal or not (`tty`), a clock that
 * moves one second each time it is read (so every progress update is due), stdin as given.
 */
export function runMainWithProgressClock(argv: readonly string[], options: { tty: boolean; stdin?: string }): Promise<MainResult> {
  let t = 0;
  return runMain(argv, { stdin: options.stdin ?? '', stderrIsTTY: options.tty, now: () => (t += 1000) });
}

/** The progress lines drawn on a terminal's stderr (each redraw starts with CR + clear line). */
export const progressDraws = (stderr: string): string[] => stderr.split('\r\x1b[2K').filter((s) => s.trim() !== '');
