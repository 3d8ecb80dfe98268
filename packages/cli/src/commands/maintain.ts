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
import { jobsFor, readConfig } from './maintain-config.js';
import type { JobName, MaintainTotals, TableResult } from './maintain-run.js';
import { maintainTable } from './maintain-table.js';
import { dryRunOption, jsonOption, printLine, tableLocation } from './shared.js';

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
      '(when the table sets partition.expiration-time), snapshot expiration (table options), orphan cleanup (files older than 1d), ' +
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
    },
  },
  async run(args, ctx) {
    const hasTables = args.positionals.length > 0;
    if (hasTables === (args.options.warehouse !== undefined))
      throw new UsageError('give either one or more <table> arguments or --warehouse <uri>', 'maintain');
    const config = args.options.config !== undefined ? await readConfig(args.options.config, ctx) : {};
    const dryRun = args.options['dry-run'];
    const started = Date.now();

    // Targets: [key used for per-table settings, location, opener].
    const targets: Array<{ name: string; location: string; open: () => Promise<Table>; owned: boolean }> = [];
    let catalog: FileSystemCatalog | undefined;
    try {
      if (args.options.warehouse !== undefined) {
        catalog = new FileSystemCatalog(tableLocation(args.options.warehouse, ctx));
        const c = catalog;
        for (const db of await c.listDatabases()) {
          for (const t of await c.listTables(db))
            targets.push({
              name: `${db}.${t}`,
              location: c.tableLocation(`${db}.${t}`),
              open: () => c.getTable(`${db}.${t}`),
              owned: false,
            });
        }
      } else {
        for (const arg of args.positionals) {
          const location = tableLocation(arg, ctx);
          targets.push({ name: arg, location, open: () => openTable(location), owned: true });
        }
      }
      const known = new Set(targets.flatMap((t) => [t.name, t.location]));
      for (const key of Object.keys(config.tables ?? {})) {
        if (!known.has(key))
          ctx.stderr.write(`tidemark maintain: warning: config 'tables' names '${key}', which is not one of the tables maintained\n`);
      }

      const results: TableResult[] = [];
      const totals: MaintainTotals = {
        snapshotsExpired: 0,
        filesDeleted: 0,
        bytesFreed: 0,
        partitionsDropped: 0,
        tagsCreated: 0,
        tagsDeleted: 0,
      };
      for (const target of targets) {
        if (ctx.signal.aborted) break;
        const result: TableResult = { table: target.location, ok: true, jobs: {} };
        results.push(result);
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
          continue;
        }
        try {
          await maintainTable({
            ctx,
            name: target.name,
            location: target.location,
            table,
            jobs: jobsFor(config, target.name, target.location),
            dryRun,
            verify: args.options.verify === true,
            result,
            totals,
            say: (line) => (args.options.json ? Promise.resolve() : printLine(ctx, `${target.location}: ${line}`)),
            fail,
          });
        } finally {
          if (target.owned) await table.close();
        }
      }

      const failed = results.filter((r) => !r.ok).length;
      if (args.options.json) {
        await writeJsonSummary(
          ctx.stdout,
          { command: 'maintain', dryRun, tables: results, tablesFailed: failed, ...totals, durationMs: Date.now() - started },
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
      return failed > 0 ? ExitCode.Failed : ExitCode.Ok;
    } finally {
      await catalog?.close();
    }
  },
});
