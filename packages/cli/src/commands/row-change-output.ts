/**
 * Output of the commands that change rows in place (`delete`, `update`) and of `write
 * --overwrite --dry-run`: the progress bar fed from the library's progress callbacks, and the
 * text and `--json` forms of what was done or, in a dry run, would be done.
 */
import type {
  CommitResult,
  DeleteResult,
  OverwritePlan,
  RowChangeDryRun,
  RowChangePlan,
  RowChangeProgress,
  UpdateResult,
} from '@tidemark/core';
import type { CommandContext } from '../context.js';
import type { ProgressReporter } from '../output/progress.js';
import { writeJsonSummary } from '../output/progress.js';
import { printLine, progressFor } from './shared.js';

/**
 * One bar per phase of a delete or update (`scanning`, `writing`, `committing`), drawn only when
 * stderr is a terminal and the output is not `--json` or `--quiet`.
 */
export class RowChangeProgressBar {
  private bar: ProgressReporter | undefined;
  private phase = '';
  private done = 0;

  constructor(
    private readonly ctx: CommandContext,
    private readonly label: string,
    private readonly silent: boolean,
  ) {}

  /** The callback to hand to `Table.delete` / `Table.update` as `onProgress`. */
  readonly onProgress = (p: RowChangeProgress): void => {
    if (this.silent) return;
    if (p.phase !== this.phase || this.bar === undefined) {
      this.bar?.finish();
      this.phase = p.phase;
      this.done = 0;
      const unit = p.unit === 'rows' ? 'rows matched' : 'files';
      this.bar = progressFor(this.ctx, `${this.label}: ${p.phase}`, unit, p.total, undefined, { showRate: p.phase === 'scanning' });
    } else if (p.total !== undefined) {
      this.bar.setTotal(p.total);
    }
    this.bar.add(Math.max(0, p.done - this.done));
    this.done = Math.max(this.done, p.done);
  };

  finish(): void {
    this.bar?.finish();
  }
}

/** What `delete` or `update` returned, whatever the verb. */
export interface RowChangeOutcome {
  readonly command: 'delete' | 'update';
  readonly table: string;
  readonly verb: 'deleted' | 'updated';
  readonly noun: 'key' | 'row';
  /** Rows changed by the commit (0 in a dry run). */
  readonly count: number;
  /** Null in a dry run, unless it found the identifier already committed (`skipped`). */
  readonly result: CommitResult | null;
  readonly plan: RowChangePlan;
  readonly dryRun: boolean;
}

/** The parts of {@link RowChangeOutcome} that come from the library's result. */
export function outcomeOf(
  r: DeleteResult | UpdateResult | RowChangeDryRun,
): Pick<RowChangeOutcome, 'count' | 'result' | 'plan' | 'dryRun'> {
  if (r.dryRun) {
    return { count: 0, result: r.skipped !== undefined ? { status: 'skipped', reason: r.skipped } : null, plan: r.plan, dryRun: true };
  }
  return { count: 'deleted' in r ? r.deleted : r.updated, result: r.result, plan: r.plan, dryRun: false };
}

/** `1 row`, `2 rows`. */
export const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** Text output lists at most this many partitions or files; `--json` has all of them. */
export const TEXT_LIST_LIMIT = 20;

/** Prints `lines` indented, at most {@link TEXT_LIST_LIMIT} of them, then how many more `--json` lists. */
/** Prints `lines` indented, at most a screenful; `--json` has them all. */
export async function printList(ctx: CommandContext, lines: readonly string[], what: string): Promise<void> {
  for (const line of lines.slice(0, TEXT_LIST_LIMIT)) await printLine(ctx, `  ${line}`);
  if (lines.length > TEXT_LIST_LIMIT)
    await printLine(ctx, `  … and ${plural(lines.length - TEXT_LIST_LIMIT, what)} more (--json lists them all)`);
}

/** `dt=2024-05-01/hr=3`, or `(unpartitioned)`. */
export function partitionText(spec: Readonly<Record<string, string>>): string {
  const parts = Object.entries(spec).map(([k, v]) => `${k}=${v}`);
  return parts.length === 0 ? '(unpartitioned)' : parts.join('/');
}

/**
 * Prints what `delete` / `update` did or would do. Text: `<verb> N <noun>s: committed snapshot
 * S` (a dry run: `dry run: would <verb> N ...` and one line per partition and per data file
 * getting deletion vectors). `--json`: one object with the commit outcome and the plan's figures,
 * the same keys for a dry run and a real one, so the two can be compared.
 */
export async function printRowChange(ctx: CommandContext, o: RowChangeOutcome, json: boolean): Promise<void> {
  const { plan, result } = o;
  const status = result === null ? 'dry-run' : result.status;
  if (json) {
    await writeJsonSummary(
      ctx.stdout,
      {
        command: o.command,
        table: o.table,
        dryRun: o.dryRun,
        status,
        [o.verb]: o.count,
        ...(result?.status === 'committed' ? { snapshotId: result.snapshotId } : {}),
        ...(result?.status === 'skipped' ? { reason: result.reason } : {}),
        baseSnapshotId: plan.baseSnapshotId,
        rowsMatched: plan.rowsMatched,
        method: plan.method,
        partitions: plan.partitions,
        deletionVectorFiles: plan.deletionVectorFiles,
      },
      ctx.signal,
    );
    return;
  }
  if (result?.status === 'skipped') {
    await printLine(ctx, `${o.dryRun ? 'dry run: would skip' : 'skipped'}: ${result.reason}`);
    return;
  }
  const what = plural(plan.rowsMatched, o.noun);
  if (o.dryRun) {
    const verb = o.verb === 'deleted' ? 'delete' : 'update';
    const base = plan.baseSnapshotId === null ? 'the table has no snapshot' : `planned against snapshot ${plan.baseSnapshotId}`;
    const how =
      plan.rowsMatched === 0
        ? ''
        : plan.method === 'deletion-vectors'
          ? `, marking them in the deletion vectors of ${plural(plan.deletionVectorFiles.length, 'data file')}`
          : `, as new ${o.verb === 'deleted' ? 'delete records' : 'upserts'} in new data files`;
    await printLine(ctx, `dry run: would ${verb} ${what}${how} (${base}); nothing was changed`);
    await printList(
      ctx,
      plan.partitions.map((p) => `partition ${partitionText(p.partition)}: ${plural(p.rows, 'row')}`),
      'partition',
    );
    await printList(
      ctx,
      plan.deletionVectorFiles.map((f) => `data file ${partitionText(f.partition)}/bucket-${f.bucket}/${f.file}: ${plural(f.rows, 'row')}`),
      'data file',
    );
    return;
  }
  if (result?.status === 'committed') await printLine(ctx, `${o.verb} ${plural(o.count, o.noun)}: committed snapshot ${result.snapshotId}`);
  else await printLine(ctx, `${o.verb} ${what}: nothing matched; no snapshot was created`);
}

/** The `--json` figures of `write --overwrite --dry-run`. */
export function overwritePlanJson(plan: OverwritePlan): Record<string, unknown> {
  return {
    baseSnapshotId: plan.baseSnapshotId,
    mode: plan.mode,
    partitions: plan.partitions,
    filesReplaced: plan.filesReplaced,
    rowsReplaced: plan.rowsReplaced,
    rowsWritten: plan.rowsWritten,
  };
}

/** Text of `write --overwrite --dry-run`: a summary line, then one line per partition. */
export async function printOverwritePlan(ctx: CommandContext, plan: OverwritePlan): Promise<void> {
  const base = plan.baseSnapshotId === null ? 'the table has no snapshot' : `planned against snapshot ${plan.baseSnapshotId}`;
  const scope =
    plan.mode === 'table'
      ? 'the whole table'
      : `${plural(plan.partitions.filter((p) => p.currentFiles > 0).length, 'partition')}${plan.mode === 'static' ? ' matching --partition' : ''}`;
  await printLine(
    ctx,
    `dry run: would overwrite ${scope} with ${plural(plan.rowsWritten, 'row')}, replacing ${plural(plan.filesReplaced, 'data file')} ` +
      `holding ${plural(plan.rowsReplaced, 'row')} (${base}); nothing was changed`,
  );
  await printList(
    ctx,
    plan.partitions.map(
      (p) =>
        `partition ${partitionText(p.partition)}: ${plural(p.currentFiles, 'file')} with ${plural(p.currentRows, 'row')} now, ${plural(p.rowsWritten, 'row')} written`,
    ),
    'partition',
  );
}
