/**
 * The jobs `tidemark maintain` runs on one table, in order: verify (when asked), compaction,
 * automatic tags, partition expiration, snapshot expiration, orphan cleanup and manifest
 * compaction. A failing job is reported and the next one runs; a table that fails verification
 * is left alone. Tags come before snapshot expiration so that a new tag keeps its snapshot.
 */
import {
  DEFAULT_IN_PROGRESS_GRACE_MS,
  compactAppendTable,
  compactPrimaryKeyTable,
  compactManifests,
  expireSnapshots,
  removeOrphanFiles,
  verifyTable,
} from '@tidemark/maintenance';
import { UsageError } from '../errors.js';
import { parseDuration, parseOlderThan } from '../options/duration.js';
import type { MaintainExpireConfig, MaintainOrphansConfig } from './maintain-config.js';
import type { JobName, TableRun } from './maintain-run.js';
import {
  CompactProgressBar,
  compactJson,
  compactManifestsJson,
  compactManifestsText,
  compactText,
  expireJson,
  expireText,
  isPrimaryKeyTable,
  orphansJson,
  orphansText,
  PhaseProgress,
  runJob,
} from './maintenance-shared.js';
import { verifyText } from './verify.js';
import { expireOldPartitions, maintainTags } from './maintain-lifecycle.js';

/** Runs the table's jobs in order (see the module comment). */
export async function maintainTable(run: TableRun): Promise<void> {
  const { jobs } = run;
  if ((jobs.verify === true || run.verify) && !(await verified(run))) return;
  if (jobs.compact !== false) await attempt(run, 'compact', () => compact(run));
  if (jobs.tags !== false) await attempt(run, 'tags', () => maintainTags(run));
  if (jobs.partitions !== false) await attempt(run, 'partitions', () => expireOldPartitions(run));
  if (jobs.expire !== false) await attempt(run, 'expire', () => expire(run));
  if (jobs.orphans !== false) await attempt(run, 'orphans', () => removeOrphans(run));
  if (jobs.compactManifests === true) await attempt(run, 'compactManifests', () => compactTableManifests(run));
}

async function attempt(run: TableRun, job: JobName, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    run.fail(job, e);
  }
}

/** Metadata-only verification; false (and the failure recorded) when the table is damaged. */
async function verified(run: TableRun): Promise<boolean> {
  try {
    const v = await runJob(run.ctx, () => verifyTable(run.table, { metadataOnly: true, signal: run.ctx.signal }));
    run.result.jobs.verify = { ok: v.ok, problems: v.problems };
    await run.say(`verify: ${verifyText(v).split('\n').join(`\n${run.location}: verify: `)}`);
    if (!v.ok) {
      // Expiring or cleaning up around damage could destroy what a repair needs.
      run.fail('verify', new Error(`${v.problems.length} problem(s) found; no other job was run on this table`));
      return false;
    }
    return true;
  } catch (e) {
    run.fail('verify', e);
    return false;
  }
}

async function compact(run: TableRun): Promise<void> {
  const { ctx, jobs, table, dryRun } = run;
  const bar = new CompactProgressBar(ctx, `${run.name}: compacting`);
  const full = jobs.compact ? (jobs.compact.full ?? false) : false;
  const s = await runJob(ctx, () =>
    isPrimaryKeyTable(table)
      ? compactPrimaryKeyTable(table, { full, dryRun, signal: ctx.signal, onProgress: bar.onProgress })
      : compactAppendTable(table, {
          full,
          ...(jobs.compact && jobs.compact.maxFiles !== undefined ? { maxFilesPerRun: jobs.compact.maxFiles } : {}),
          dryRun,
          signal: ctx.signal,
          onProgress: bar.onProgress,
        }),
  ).finally(() => bar.finish());
  run.result.jobs.compact = compactJson(run.location, s);
  await run.say(`compact: ${compactText(s)}`);
}

async function expire(run: TableRun): Promise<void> {
  const { ctx, dryRun } = run;
  // Never false here: maintainTable skips a job the config turns off.
  const e: MaintainExpireConfig = run.jobs.expire || {};
  const progress = new PhaseProgress(ctx, `${run.name}: expiring snapshots`);
  const s = await runJob(ctx, () =>
    expireSnapshots(run.table, {
      ...(e.retainMin !== undefined ? { retainMin: e.retainMin } : {}),
      ...(e.retainMax !== undefined ? { retainMax: e.retainMax } : {}),
      ...(e.olderThan !== undefined ? { olderThanMs: parseOlderThan(e.olderThan, 'expire.olderThan', ctx.now()).cutoffMs } : {}),
      ...(e.maxDeletes !== undefined ? { expireLimit: e.maxDeletes } : {}),
      dryRun,
      signal: ctx.signal,
      now: ctx.now,
      onProgress: progress.onProgress,
    }),
  ).finally(() => progress.finish());
  run.totals.snapshotsExpired += s.snapshotsExpired;
  run.totals.filesDeleted += s.filesDeleted;
  run.totals.bytesFreed += s.bytesFreed;
  run.result.jobs.expire = expireJson(run.location, s);
  await run.say(`expire: ${expireText(s)}`);
}

async function removeOrphans(run: TableRun): Promise<void> {
  const { ctx, dryRun } = run;
  const o: MaintainOrphansConfig = run.jobs.orphans || {};
  const now = ctx.now();
  const cutoff = parseOlderThan(o.olderThan ?? '1d', 'orphans.olderThan', now).cutoffMs;
  if (cutoff > now) throw new UsageError(`config 'orphans.olderThan' is in the future`, 'maintain');
  const grace = o.grace !== undefined ? parseDuration(o.grace, 'orphans.grace') : DEFAULT_IN_PROGRESS_GRACE_MS;
  const progress = new PhaseProgress(ctx, `${run.name}: removing orphan files`);
  const s = await runJob(ctx, () =>
    removeOrphanFiles(run.table, {
      olderThanMs: cutoff,
      inProgressGraceMs: grace,
      dryRun,
      signal: ctx.signal,
      now: ctx.now,
      onProgress: progress.onProgress,
    }),
  ).finally(() => progress.finish());
  run.totals.filesDeleted += s.filesDeleted;
  run.totals.bytesFreed += s.bytesFreed;
  run.result.jobs.orphans = orphansJson(run.location, s, Math.min(cutoff, now - grace), grace);
  await run.say(`orphans: ${orphansText(s)}`);
}

async function compactTableManifests(run: TableRun): Promise<void> {
  const s = await runJob(run.ctx, () => compactManifests(run.table, { dryRun: run.dryRun, signal: run.ctx.signal }));
  run.result.jobs.compactManifests = compactManifestsJson(run.location, s);
  await run.say(`compact-manifests: ${compactManifestsText(s)}`);
}
