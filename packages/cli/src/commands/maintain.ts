/**
 * `tidemark maintain`: every maintenance job for each table, meant for cron. For each table, in
 * this order: compaction (small files of append tables, sorted runs of primary-key tables),
 * automatic tags (`tag.*` options, tag retention), partition expiration (when the table sets
 * `partition.expiration-time`), snapshot expiration (table options), orphan file cleanup (1 day),
 * and optionally manifest compaction. One failing table (or job) does not stop the others; the
 * exit code is 1 when anything failed.
 *
 * The optional `--config` JSON file:
 *
 *     {
 *       "compact":  { "full": false, "maxFiles": 1000 } | false,
 *       "expire":   { "retainMin": 10, "retainMax": 100, "olderThan": "1h", "maxDeletes": 50 } | false,
 *       "orphans":  { "olderThan": "1d", "grace": "1h" } | false,
 *       "compactManifests": true | false,
 *       "verify":   true | false,
 *       "partitions": true | false,
 *       "tags":     true | false,
 *       "tables":   { "<db>.<table> or the <table> argument": { …the same keys… } }
 *     }
 *
 * Unset values come from the table options (expiration) or the defaults of the single commands.
 */
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { defineCommand, ExitCode } from '../command.js';
import { UsageError } from '../errors.js';
import { formatBytes, writeJsonSummary } from '../output/progress.js';
import type { CommandContext } from '../context.js';
import { jobsFor, readConfig, type MaintainConfig } from './maintain-config.js';
import type { JobName, MaintainTotals, TableResult } from './maintain-run.js';
import { maintainTable } from './maintain-table.js';
import { branchOption, dryRunOption, jsonOption, printLine, tableLocation } from './shared.js';

/** The partition and tag counts of the closing line, when there are any. */
function lifecycleTotals(t: MaintainTotals, dryRun: boolean): string {
  const would = dryRun ? 'would be ' : '';
  const parts = [
    t.tagsCreated > 0 ? `${t.tagsCreated} tag(s) ${would}created` : '',
    t.tagsDeleted > 0 ? `${t.tagsDeleted} tag(s) ${would}deleted` : '',
    t.partitionsDropped > 0 ? `${t.partitionsDropped} partition(s) ${would}dropped` : '',
  ].filter((x) => x !== '');
  return parts.length === 0 ? '' : `${parts.join(', ')}, `;
}

/** What the steps of one `maintain` run share. */
interface MaintainRun {
  readonly ctx: CommandContext;
  readonly config: MaintainConfig;
  readonly dryRun: boolean;
  /** `--verify`. */
  readonly verify: boolean;
  readonly json: boolean;
  /** When the run started (ms since the epoch), for the JSON summary's duration. */
  readonly started: number;
  readonly totals: MaintainTotals;
}

/** A table to maintain: its key for per-table settings, its location and how to open it. */
interface MaintainTarget {
  readonly name: string;
  readonly location: string;
  readonly open: () => Promise<Table>;
  /** Whether the run opened the table itself (and closes it), rather than the catalog. */
  readonly owned: boolean;
}

/** Every table of the warehouse, keyed `<db>.<table>`, opened through the catalog (on `branch` when given). */
async function warehouseTargets(c: FileSystemCatalog, branch: string | undefined): Promise<MaintainTarget[]> {
  const targets: MaintainTarget[] = [];
  for (const db of await c.listDatabases()) {
    for (const t of await c.listTables(db))
      targets.push({
        name: `${db}.${t}`,
        location: c.tableLocation(`${db}.${t}`),
        open: () =>
          branch === undefined ? c.getTable(`${db}.${t}`) : openTable(c.tableLocation(`${db}.${t}`), { fileIO: c.fileIO, branch }),
        owned: false,
      });
  }
  return targets;
}

/** The `<table>` arguments, keyed by the argument as given. */
function argumentTargets(positionals: readonly string[], ctx: CommandContext, branch: string | undefined): MaintainTarget[] {
  return positionals.map((arg) => {
    const location = tableLocation(arg, ctx);
    return { name: arg, location, open: () => openTable(location, branch !== undefined ? { branch } : {}), owned: true };
  });
}

/** Warns of the config's per-table settings that name no table of the run (a typo would go unnoticed). */
function warnOfUnknownConfigTables(run: MaintainRun, targets: readonly MaintainTarget[]): void {
  const known = new Set(targets.flatMap((t) => [t.name, t.location]));
  for (const key of Object.keys(run.config.tables ?? {})) {
    if (!known.has(key))
      run.ctx.stderr.write(`tidemark maintain: warning: config 'tables' names '${key}', which is not one of the tables maintained\n`);
  }
}

/** Opens `target` and runs its jobs, recording failures in `result`; rethrows when the run was interrupted. */
async function maintainTarget(run: MaintainRun, target: MaintainTarget, result: TableResult): Promise<void> {
  const { ctx } = run;
  const fail = (job: JobName | 'open', e: unknown): void => {
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : e;
    result.ok = false;
    const message = e instanceof Error ? e.message : String(e);
    if (job !== 'open') result.jobs[job] = { error: message };
    else result.error = message;
    ctx.stderr.write(`tidemark maintain: ${target.location}: ${job} failed: ${message}\n`);
  };
  let table: Table;
  try {
    table = await target.open();
  } catch (e) {
    fail('open', e);
    return;
  }
  try {
    await maintainTable({
      ctx,
      name: target.name,
      location: target.location,
      table,
      jobs: jobsFor(run.config, target.name, target.location),
      dryRun: run.dryRun,
      verify: run.verify,
      result,
      totals: run.totals,
      say: (line) => (run.json ? Promise.resolve() : printLine(ctx, `${target.location}: ${line}`)),
      fail,
    });
  } finally {
    if (target.owned) await table.close();
  }
}

/** The closing JSON summary (`--json`) or line. */
async function printSummary(run: MaintainRun, results: readonly TableResult[], failed: number): Promise<void> {
  const { ctx, dryRun, totals } = run;
  if (run.json) {
    await writeJsonSummary(
      ctx.stdout,
      { command: 'maintain', dryRun, tables: results, tablesFailed: failed, ...totals, durationMs: Date.now() - run.started },
      ctx.signal,
    );
  } else {
    await printLine(
      ctx,
      dryRun
        ? `dry run over ${results.length} table(s), ${failed} failed: ${lifecycleTotals(totals, dryRun)}` +
            `${totals.snapshotsExpired} snapshot(s) would expire, ${totals.filesDeleted} file(s) would be deleted, ` +
            `${formatBytes(totals.bytesFreed)} would be freed; nothing was changed`
        : `maintained ${results.length} table(s), ${failed} failed: ${lifecycleTotals(totals, dryRun)}` +
            `${totals.snapshotsExpired} snapshot(s) expired, ${totals.filesDeleted} file(s) deleted, ${formatBytes(totals.bytesFreed)} freed`,
    );
  }
}

/** `tidemark maintain`: all maintenance for cron. */
export const maintainCommand = defineCommand({
  name: 'maintain',
  summary: 'compact, tag, expire partitions and snapshots, and remove orphans of each table according to its options',
  usage: {
    synopsis: [
      'maintain <table>... [--config <file>] [--dry-run] [--json]',
      'maintain --warehouse <uri> [--config <file>] [--dry-run] [--json]',
    ],
    description:
      'For each table: compaction (append and primary-key tables), automatic tags (tag.* options) and tag retention, partition expiration ' +
      '(when the table sets partition.expiration-time; every run checks, whatever partition.expiration-check-interval), snapshot expiration (table options), orphan cleanup (files older than 1d), ' +
      'and manifest compaction when configured. A failing table does not stop the others; the exit code is then 1. ' +
      'The --config JSON is described in docs/maintenance.md.',
    positionals: [{ name: 'table', description: 'table directories', required: false, variadic: true }],
    options: {
      warehouse: { type: 'string', valueName: 'uri', description: 'maintain every table of this warehouse' },
      config: { type: 'string', valueName: 'file', description: 'JSON file with per-job and per-table settings' },
      verify: {
        type: 'boolean',
        description: 'verify each table first (as verify --metadata-only); a damaged table is reported and left alone',
      },
      'dry-run': dryRunOption,
      json: jsonOption,
      branch: { ...branchOption, description: 'maintain this branch of each table (orphan cleanup always keeps every branch)' },
    },
  },
  async run(args, ctx) {
    const hasTables = args.positionals.length > 0;
    if (hasTables === (args.options.warehouse !== undefined))
      throw new UsageError('give either one or more <table> arguments or --warehouse <uri>', 'maintain');
    const config = args.options.config !== undefined ? await readConfig(args.options.config, ctx) : {};
    const run: MaintainRun = {
      ctx,
      config,
      dryRun: args.options['dry-run'],
      verify: args.options.verify === true,
      json: args.options.json,
      started: Date.now(),
      totals: { snapshotsExpired: 0, filesDeleted: 0, bytesFreed: 0, partitionsDropped: 0, tagsCreated: 0, tagsDeleted: 0 },
    };
    const branch = args.options.branch;
    const catalog = args.options.warehouse !== undefined ? new FileSystemCatalog(tableLocation(args.options.warehouse, ctx)) : undefined;
    try {
      const targets = catalog !== undefined ? await warehouseTargets(catalog, branch) : argumentTargets(args.positionals, ctx, branch);
      warnOfUnknownConfigTables(run, targets);
      const results: TableResult[] = [];
      for (const target of targets) {
        if (ctx.signal.aborted) break;
        const result: TableResult = { table: target.location, ok: true, jobs: {} };
        results.push(result);
        await maintainTarget(run, target, result);
      }
      const failed = results.filter((r) => !r.ok).length;
      await printSummary(run, results, failed);
      return failed > 0 ? ExitCode.Failed : ExitCode.Ok;
    } finally {
      await catalog?.close();
    }
  },
});
