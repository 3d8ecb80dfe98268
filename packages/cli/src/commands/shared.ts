/**
 * Pieces several commands share: common option declarations, the `<table>` argument, progress
 * bars wired to the context.
 */
import { resolve as resolvePath } from 'node:path';
import type { RecordBatch } from 'apache-arrow';
import { parseLocation } from '@tidemark/storage';
import { openTable, TableNotFoundError, type Table } from '@tidemark/core';
import type { OptionSpec, PositionalSpec } from '../args.js';
import type { CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { ProgressReporter } from '../output/progress.js';
import { writeText } from '../output/writers.js';
import { nearbyTablesHint } from './nearby-tables.js';

/** The `<table>` positional every table command takes. */
export const tableArgument: PositionalSpec = {
  name: 'table',
  description: 'table directory: a local path, file://… or s3://bucket/…/db.db/table (s3a:// too)',
};

export const jsonOption = { type: 'boolean', description: 'print one JSON summary object to stdout' } as const satisfies OptionSpec;
export const dryRunOption = {
  type: 'boolean',
  description: 'show what would be done without changing anything',
} as const satisfies OptionSpec;
export const snapshotOption = { type: 'integer', min: 1, valueName: 'N', description: 'snapshot id' } as const satisfies OptionSpec;

/** A progress bar on `ctx.stderr`, drawn only when it is a terminal and `TIDEMARK_NO_PROGRESS` is unset. */
export function progressFor(
  ctx: CommandContext,
  label: string,
  unit: string,
  total?: number,
  totalBytes?: number,
  extra: { quiet?: boolean; showRate?: boolean } = {},
): ProgressReporter {
  return new ProgressReporter({
    stream: ctx.stderr,
    enabled: ctx.stderrIsTTY && !ctx.env['TIDEMARK_NO_PROGRESS'] && extra.quiet !== true,
    label,
    unit,
    now: ctx.now,
    ...(total !== undefined ? { total } : {}),
    ...(totalBytes !== undefined ? { totalBytes } : {}),
    ...(extra.showRate ? { showRate: true } : {}),
  });
}

/** `--quiet` of the commands that draw progress while they move rows. */
export const quietOption = {
  type: 'boolean',
  short: 'q',
  description: 'no progress line on stderr (it is only drawn when stderr is a terminal)',
} as const satisfies OptionSpec;

/** Progress of a job that moves rows (read, write, sql): rows, bytes, rate and elapsed time. */
export function rowProgress(ctx: CommandContext, label: string, quiet: boolean): ProgressReporter {
  return progressFor(ctx, label, 'rows', undefined, undefined, { quiet, showRate: true });
}

/** Passes `batches` through, counting their rows and Arrow bytes on `progress`. */
export async function* countedBatches(batches: AsyncIterable<RecordBatch>, progress: ProgressReporter): AsyncGenerator<RecordBatch> {
  for await (const b of batches) {
    progress.add(b.numRows, b.data.byteLength);
    yield b;
  }
}

/** True for `scheme://…` locations (file://, s3://, memory://); anything else is a local path. */
function hasScheme(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location);
}

/** The `<table>` argument as a location: URIs as given, local paths resolved against `ctx.cwd`. */
export function tableLocation(arg: string, ctx: CommandContext): string {
  // An empty argument (an unset shell variable) would otherwise mean the working directory.
  if (arg.trim() === '') throw new UsageError('the table location is empty');
  if (hasScheme(arg)) return arg;
  try {
    parseLocation(arg); // refuses `s3:bucket/path`, which would otherwise be a local directory `s3:bucket`
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return resolvePath(ctx.cwd, arg);
}

/** Opens the table named by `arg`, runs `fn`, and closes the table's FileIO afterwards. */
export async function withTable<T>(arg: string, ctx: CommandContext, fn: (table: Table) => Promise<T>): Promise<T> {
  const table = await openTableNamingNeighbours(tableLocation(arg, ctx), ctx);
  try {
    return await fn(table);
  } finally {
    await table.close();
  }
}

/**
 * Opens the table at `location`; when there is none, the error names the tables that do exist
 * nearby (a typo in a table or database name is the usual cause). With `ctx`, the table's notices
 * (unknown options, rows a read cannot show) go to the command's stderr.
 */
export async function openTableNamingNeighbours(location: string, ctx?: CommandContext): Promise<Table> {
  try {
    return await openTable(location, ctx ? { logger: stderrLogger(ctx) } : {});
  } catch (e) {
    throw await withNeighboursNamed(e, location);
  }
}

/** A logger printing each notice as one `tidemark: warning:` line on the command's stderr. */
export function stderrLogger(ctx: CommandContext): { warn(message: string): void } {
  return { warn: (m) => void ctx.stderr.write(`tidemark: warning: ${m}\n`) };
}

/** `e`, or when it says there is no table at `location`, the same message naming the tables nearby. */
export async function withNeighboursNamed(e: unknown, location: string): Promise<unknown> {
  if (!(e instanceof TableNotFoundError)) return e;
  const hint = await nearbyTablesHint(location);
  return hint === undefined ? e : new CliError(`${e.message}; ${hint}`, { cause: e });
}

/** Writes one line (a newline is added) to stdout, honouring backpressure. */
export function printLine(ctx: CommandContext, line: string): Promise<void> {
  return writeText(ctx.stdout, `${line}\n`, ctx.signal);
}

/**
 * Renders rows as aligned text columns with a header and a rule, as `read --format table` does.
 * `right` marks right-aligned (numeric) columns.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], right: readonly boolean[] = []): string {
  const widths = header.map((h, k) => Math.max([...h].length, ...rows.map((r) => [...(r[k] ?? '')].length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, k) => (right[k] ? c.padStart(widths[k]!) : c.padEnd(widths[k]!)))
      .join(' | ')
      .trimEnd() + '\n';
  return line(header) + widths.map((w) => '-'.repeat(w)).join('-+-') + '\n' + rows.map(line).join('');
}

/** Epoch milliseconds as ISO-8601 UTC (`2024-05-01T10:00:00.000Z`), or the number when out of range. */
export function isoTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}
