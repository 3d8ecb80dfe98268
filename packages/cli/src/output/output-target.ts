/**
 * Where `read` and `sql` write their result: stdout, or the file named by `--output`. A file is
 * written under a temporary name next to it and renamed when complete, so a failed or interrupted
 * command never leaves a half-written file under the requested name.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve as resolvePath } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { BINARY_FORMATS } from './binary-writers.js';

/** An open result destination. */
export interface OutputTarget {
  readonly stream: Writable;
  /** True for a file (seekable: Arrow gets the IPC file format), false for stdout. */
  readonly isFile: boolean;
  /** Flushes and, for a file, moves it into place. */
  commit(): Promise<void>;
  /** Drops a partly written file. */
  abort(): Promise<void>;
}

/**
 * Opens `--output <path>` (relative to `ctx.cwd`) or stdout. Binary formats are refused on a
 * terminal stdout, where they would only garble the screen.
 *
 * @throws UsageError for binary output to a terminal; CliError when the directory of the file is missing.
 */
export async function openOutput(ctx: CommandContext, command: string, format: string, path: string | undefined): Promise<OutputTarget> {
  if (path === undefined) {
    if ((BINARY_FORMATS as readonly string[]).includes(format) && (ctx.stdout as { isTTY?: boolean }).isTTY === true) {
      throw new UsageError(`--format ${format} writes binary data: give '--output <file>' or redirect stdout to a file or pipe`, command);
    }
    return { stream: ctx.stdout, isFile: false, commit: () => Promise.resolve(), abort: () => Promise.resolve() };
  }
  const target = resolvePath(ctx.cwd, path);
  const dir = dirname(target);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new CliError(`--output ${path}: the directory ${dir} does not exist`);
  if ((await stat(target).catch(() => undefined))?.isDirectory()) throw new CliError(`--output ${path} is a directory`);
  const temp = join(dir, `.${basename(target)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  const stream = createWriteStream(temp);
  await new Promise<void>((res, rej) => {
    stream.once('open', () => res());
    stream.once('error', (e) => rej(new CliError(`--output ${path} cannot be written: ${e.message}`, { cause: e })));
  });
  return {
    stream,
    isFile: true,
    async commit() {
      stream.end();
      await finished(stream);
      await rename(temp, target);
    },
    async abort() {
      stream.destroy();
      await rm(temp, { force: true });
    },
  };
}
