/**
 * `tidemark maintain`: every maintenance job for each table, meant for cron. For each table, in
 * this order: compaction (small files of append tables, sorted runs of primary-key tables), snapshot
 * expiration (table options), orphan file cleanup (1 day), and optionally manifest compaction. One failing table (or job) does
 * not stop the others; the exit code is 1 when anything failed.
 *
 * The optional `--config` JSON file:
 *
 *     {
 *       "compact":  { "full": false, "maxFiles": 1000 } | false,
 *       "expire":   { "retainMin": 10, "retainMax": 100, "olderThan": "1h", "maxDeletes": 50 } | false,
 *       "orphans":  { "olderThan": "1d", "grace": "1h" } | false,
 *       "compactManifests": true | false,
 *       "verify":   true | false,
 *       "tables":   { "<db>.<table> or the <table> argument": { …the same keys… } }
 *     }
 *
 * Unset values come from the table options (expiration) or the defaults of the single commands.
 */
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { defineCommand, ExitCode } from '../command.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { parseDuration, parseOlderThan } from '../options/duration.js';
import { formatBytes, writeJsonSummary } from '../output/progress.js';
import { maintainTable, type JobName, type MaintainTotals, type TableResult } from './maintain-table.js';
import { dryRunOption, jsonOption, printLine, tableLocation } from './shared.js';

/** Settings of the compaction job in the config file. */
export interface MaintainCompactConfig {
  readonly full?: boolean;
  readonly maxFiles?: number;
}

/** Settings of the expiration job; unset values come from the table options. */
export interface MaintainExpireConfig {
  readonly retainMin?: number;
  readonly retainMax?: number;
  /** Duration back from now (`1h`) or an absolute time. */
  readonly olderThan?: string;
  readonly maxDeletes?: number;
}

/** Settings of the orphan cleanup job. */
export interface MaintainOrphansConfig {
  /** Default `1d`. */
  readonly olderThan?: string;
  /** Keep every file younger than this (default 0: in-flight records protect writes in progress). */
  readonly grace?: string;
}

/** Job settings; `false` disables a job. */
export interface MaintainJobsConfig {
  readonly compact?: MaintainCompactConfig | false;
  readonly expire?: MaintainExpireConfig | false;
  readonly orphans?: MaintainOrphansConfig | false;
  readonly compactManifests?: boolean;
  /** Run `verify` (metadata and data-file sizes) first; a damaged table gets no other job. */
  readonly verify?: boolean;
}

/** The whole `--config` file. */
export interface MaintainConfig extends MaintainJobsConfig {
  readonly tables?: Readonly<Record<string, MaintainJobsConfig>>;
}

/** `tidemark maintain`: all maintenance for cron. */
export const maintainCommand = defineCommand({
  name: 'maintain',
  summary: 'expire snapshots, remove orphans and compact each table according to its options',
  usage: {
    synopsis: [
      'maintain <table>... [--config <file>] [--dry-run] [--json]',
      'maintain --warehouse <uri> [--config <file>] [--dry-run] [--json]',
    ],
    description:
      'For each table: compaction (append and primary-key tables), snapshot expiration (table options), orphan cleanup (files older than 1d), ' +
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
      const totals: MaintainTotals = { snapshotsExpired: 0, filesDeleted: 0, bytesFreed: 0 };
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
            ? `dry run over ${results.length} table(s), ${failed} failed: ${totals.snapshotsExpired} snapshot(s) would expire, ` +
                `${totals.filesDeleted} file(s) would be deleted, ${formatBytes(totals.bytesFreed)} would be freed; nothing was changed`
            : `maintained ${results.length} table(s), ${failed} failed: ${totals.snapshotsExpired} snapshot(s) expired, ` +
                `${totals.filesDeleted} file(s) deleted, ${formatBytes(totals.bytesFreed)} freed`,
        );
      }
      return failed > 0 ? ExitCode.Failed : ExitCode.Ok;
    } finally {
      await catalog?.close();
    }
  },
});

/** The settings of one table: the top-level ones, overridden job by job by `tables[name]`. */
function jobsFor(config: MaintainConfig, name: string, location: string): MaintainJobsConfig {
  const own = config.tables?.[name] ?? config.tables?.[location] ?? {};
  const merge = <T extends object>(base: T | false | undefined, over: T | false | undefined): T | false | undefined => {
    if (over === false) return false;
    if (over === undefined) return base;
    if (base === false || base === undefined) return over;
    return { ...base, ...over };
  };
  return {
    compact: merge(config.compact, own.compact),
    expire: merge(config.expire, own.expire),
    orphans: merge(config.orphans, own.orphans),
    compactManifests: own.compactManifests ?? config.compactManifests ?? false,
    verify: own.verify ?? config.verify ?? false,
  };
}

/** Reads and validates the `--config` file; any problem is a usage error (exit 2) naming the key. */
export async function readConfig(file: string, ctx: CommandContext): Promise<MaintainConfig> {
  let text: string;
  try {
    text = await readFile(resolvePath(ctx.cwd, file), 'utf8');
  } catch (e) {
    throw new UsageError(`option '--config': cannot read '${file}': ${(e as Error).message}`, 'maintain');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`option '--config': '${file}' is not valid JSON: ${(e as Error).message}`, 'maintain');
  }
  const bad = (where: string, what: string): never => {
    throw new UsageError(`config '${file}': ${where} ${what}`, 'maintain');
  };
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(json)) bad('the top level', 'must be a JSON object');
  const checkKeys = (obj: Record<string, unknown>, allowed: readonly string[], where: string): void => {
    for (const k of Object.keys(obj)) if (!allowed.includes(k)) bad(`${where}`, `has unknown key '${k}' (allowed: ${allowed.join(', ')})`);
  };
  const int = (v: unknown, where: string): void => {
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 1)) bad(where, 'must be an integer >= 1');
  };
  const str = (v: unknown, where: string, check: (s: string) => unknown): void => {
    if (v === undefined) return;
    if (typeof v !== 'string') bad(where, 'must be a string');
    check(v as string);
  };
  const jobs = (obj: Record<string, unknown>, where: string): void => {
    const at = (k: string): string => (where ? `${where}.${k}` : k);
    const job = (k: string, keys: readonly string[]): Record<string, unknown> | undefined => {
      const v = obj[k];
      if (v === undefined || v === false) return undefined;
      if (!isObject(v)) bad(at(k), 'must be an object or false');
      checkKeys(v as Record<string, unknown>, keys, at(k));
      return v as Record<string, unknown>;
    };
    const c = job('compact', ['full', 'maxFiles']);
    if (c) {
      if (c.full !== undefined && typeof c.full !== 'boolean') bad(at('compact.full'), 'must be true or false');
      int(c.maxFiles, at('compact.maxFiles'));
    }
    const e = job('expire', ['retainMin', 'retainMax', 'olderThan', 'maxDeletes']);
    if (e) {
      int(e.retainMin, at('expire.retainMin'));
      int(e.retainMax, at('expire.retainMax'));
      int(e.maxDeletes, at('expire.maxDeletes'));
      if (typeof e.retainMin === 'number' && typeof e.retainMax === 'number' && e.retainMin > e.retainMax)
        bad(at('expire.retainMin'), 'cannot exceed retainMax');
      str(e.olderThan, at('expire.olderThan'), (s) => parseOlderThan(s, at('expire.olderThan'), ctx.now()));
    }
    const o = job('orphans', ['olderThan', 'grace']);
    if (o) {
      str(o.olderThan, at('orphans.olderThan'), (s) => {
        if (parseOlderThan(s, at('orphans.olderThan'), ctx.now()).cutoffMs > ctx.now()) bad(at('orphans.olderThan'), 'is in the future');
      });
      str(o.grace, at('orphans.grace'), (s) => parseDuration(s, at('orphans.grace')));
    }
    if (obj.compactManifests !== undefined && typeof obj.compactManifests !== 'boolean')
      bad(at('compactManifests'), 'must be true or false');
    if (obj.verify !== undefined && typeof obj.verify !== 'boolean') bad(at('verify'), 'must be true or false');
  };
  const root = json as Record<string, unknown>;
  checkKeys(root, ['compact', 'expire', 'orphans', 'compactManifests', 'verify', 'tables'], 'the top level');
  jobs(root, '');
  if (root.tables !== undefined) {
    if (!isObject(root.tables)) bad('tables', 'must be an object keyed by table');
    for (const [name, v] of Object.entries(root.tables as Record<string, unknown>)) {
      if (!isObject(v)) bad(`tables['${name}']`, 'must be an object');
      checkKeys(v as Record<string, unknown>, ['compact', 'expire', 'orphans', 'compactManifests', 'verify'], `tables['${name}']`);
      jobs(v as Record<string, unknown>, `tables['${name}']`);
    }
  }
  return root as MaintainConfig;
}
