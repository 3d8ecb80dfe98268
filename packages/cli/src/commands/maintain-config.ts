/**
 * The `--config` file of `tidemark maintain` (see maintain.ts for its shape): the job settings,
 * their validation, and each table's settings (the top-level ones overridden by `tables[name]`).
 */
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { parseDuration, parseOlderThan } from '../options/duration.js';

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
  /** Partition expiration, for tables that set `partition.expiration-time` (default true). */
  readonly partitions?: boolean;
  /** Automatic tags: creation and expiration by `tag.*` options, and tags past their retention (default true). */
  readonly tags?: boolean;
}

/** The whole `--config` file. */
export interface MaintainConfig extends MaintainJobsConfig {
  readonly tables?: Readonly<Record<string, MaintainJobsConfig>>;
}

/** The settings of one table: the top-level ones, overridden job by job by `tables[name]`. */
export function jobsFor(config: MaintainConfig, name: string, location: string): MaintainJobsConfig {
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
    partitions: own.partitions ?? config.partitions ?? true,
    tags: own.tags ?? config.tags ?? true,
  };
}

/** The keys of the job settings, at the top level and per table. */
const JOB_KEYS = ['compact', 'expire', 'orphans', 'compactManifests', 'verify', 'partitions', 'tags'] as const;

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
    for (const k of ['verify', 'partitions', 'tags']) {
      if (obj[k] !== undefined && typeof obj[k] !== 'boolean') bad(at(k), 'must be true or false');
    }
  };
  const root = json as Record<string, unknown>;
  checkKeys(root, [...JOB_KEYS, 'tables'], 'the top level');
  jobs(root, '');
  if (root.tables !== undefined) {
    if (!isObject(root.tables)) bad('tables', 'must be an object keyed by table');
    for (const [name, v] of Object.entries(root.tables as Record<string, unknown>)) {
      if (!isObject(v)) bad(`tables['${name}']`, 'must be an object');
      checkKeys(v as Record<string, unknown>, JOB_KEYS, `tables['${name}']`);
      jobs(v as Record<string, unknown>, `tables['${name}']`);
    }
  }
  return root as MaintainConfig;
}
