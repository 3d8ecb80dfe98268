/**
 * Pieces several commands share: common option declarations, the `<table>` argument, progress
 * bars wired to the context, and the placeholder for engines that do not exist yet.
 */
import type { OptionSpec, PositionalSpec } from '../args.js';
import type { CommandContext } from '../context.js';
import { NotImplementedError } from '../errors.js';
import { ProgressReporter } from '../output/progress.js';

/** The `<table>` positional every table command takes. */
export const tableArgument: PositionalSpec = {
  name: 'table',
  description: 'table directory: a local path, file://… or s3://bucket/…/db.db/table',
};

export const jsonOption = { type: 'boolean', description: 'print one JSON summary object to stdout' } as const satisfies OptionSpec;
export const dryRunOption = { type: 'boolean', description: 'show what would be done without changing anything' } as const satisfies OptionSpec;
export const snapshotOption = { type: 'integer', min: 1, valueName: 'N', description: 'snapshot id' } as const satisfies OptionSpec;

/** Fails the command because the engine it needs is still being built (exit code 1). */
export function notYetImplemented(command: string, waitingFor: string): never {
  throw new NotImplementedError(command, waitingFor);
}

/** A progress bar on `ctx.stderr`, drawn only when it is a terminal and `TIDEMARK_NO_PROGRESS` is unset. */
export function progressFor(ctx: CommandContext, label: string, unit: string, total?: number, totalBytes?: number): ProgressReporter {
  return new ProgressReporter({
    stream: ctx.stderr,
    enabled: ctx.stderrIsTTY && !ctx.env['TIDEMARK_NO_PROGRESS'],
    label,
    unit,
    now: ctx.now,
    ...(total !== undefined ? { total } : {}),
    ...(totalBytes !== undefined ? { totalBytes } : {}),
  });
}
