/**
 * One table's run of `tidemark maintain`: its settings, where its outcome goes, and the names of
 * its jobs (shared by maintain.ts and the job modules).
 */
import type { Table } from '@tidemark/core';
import type { CommandContext } from '../context.js';
import type { MaintainJobsConfig } from './maintain-config.js';

/** A job of `maintain`, as named in its JSON summary. */
export type JobName = 'verify' | 'compact' | 'tags' | 'partitions' | 'expire' | 'orphans' | 'compactManifests';
/** What a job reports in the JSON summary (its own summary, or `{ error }`). */
export type JobOutcome = Record<string, unknown>;

/** One table's line of the JSON summary. */
export interface TableResult {
  readonly table: string;
  ok: boolean;
  error?: string;
  readonly jobs: Partial<Record<JobName, JobOutcome>>;
}

/** Sums over every table of the run. */
export interface MaintainTotals {
  snapshotsExpired: number;
  filesDeleted: number;
  bytesFreed: number;
  partitionsDropped: number;
  tagsCreated: number;
  tagsDeleted: number;
}

/** One table being maintained, with where its outcome goes. */
export interface TableRun {
  readonly ctx: CommandContext;
  /** The table's key for per-table settings (`db.table` or the argument), shown in progress bars. */
  readonly name: string;
  readonly location: string;
  readonly table: Table;
  readonly jobs: MaintainJobsConfig;
  readonly dryRun: boolean;
  /** `--verify`: verify even when the config does not ask for it. */
  readonly verify: boolean;
  readonly result: TableResult;
  readonly totals: MaintainTotals;
  /** Prints one line about the table (nothing with --json). */
  say(line: string): Promise<void>;
  /** Records and reports a failed job; rethrows when the run was interrupted. */
  fail(job: JobName, e: unknown): void;
}
