import { expireSnapshots } from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseOlderThan } from '../options/duration.js';
import { writeJsonSummary } from '../output/progress.js';
import { dryRunFiles, expireJson, expireText, PhaseProgress, printDryRun, runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark expire-snapshots`. */
export const expireSnapshotsCommand = defineCommand({
  name: 'expire-snapshots',
  summary: 'expire old snapshots and delete the files only they use',
  usage: {
    synopsis: [
      'expire-snapshots <table> [--retain-min N] [--retain-max N] [--older-than <duration|timestamp>] [--max-deletes N] [--dry-run] [--json]',
    ],
    description:
      'Defaults come from the table options (snapshot.num-retained.min 10, snapshot.num-retained.max unlimited, ' +
      'snapshot.time-retained 1h, snapshot.expire.limit 50 snapshots per run). Tags and retained snapshots are never touched. ' +
      'Durations: 90s, 30m, 1h, 1d, 7d; times: ISO-8601 or epoch ms.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      'retain-min': { type: 'integer', min: 1, valueName: 'N', description: 'always keep at least N snapshots' },
      'retain-max': { type: 'integer', min: 1, valueName: 'N', description: 'keep at most N snapshots' },
      'older-than': {
        type: 'string',
        valueName: 'duration|timestamp',
        description: 'expire snapshots older than this (default snapshot.time-retained)',
      },
      'max-deletes': {
        type: 'integer',
        min: 1,
        valueName: 'N',
        description: 'expire at most N snapshots in this run (default snapshot.expire.limit)',
      },
      'dry-run': { ...dryRunOption, description: 'list the files that would be deleted and their total size' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const { 'retain-min': min, 'retain-max': max, 'older-than': olderThan, 'max-deletes': maxDeletes } = args.options;
    if (min !== undefined && max !== undefined && min > max)
      throw new UsageError(`'--retain-min' (${min}) cannot exceed '--retain-max' (${max})`, 'expire-snapshots');
    const now = ctx.now();
    const cutoff = olderThan !== undefined ? parseOlderThan(olderThan, '--older-than', now).cutoffMs : undefined;
    const dryRun = args.options['dry-run'];
    const arg = args.named['table']!;
    await withTable({ table: arg, branch: args.options.branch }, ctx, async (table) => {
      const progress = new PhaseProgress(ctx, 'expiring snapshots');
      const summary = await runJob(ctx, () =>
        expireSnapshots(table, {
          ...(min !== undefined ? { retainMin: min } : {}),
          ...(max !== undefined ? { retainMax: max } : {}),
          ...(cutoff !== undefined ? { olderThanMs: cutoff } : {}),
          ...(maxDeletes !== undefined ? { expireLimit: maxDeletes } : {}),
          dryRun,
          signal: ctx.signal,
          now: ctx.now,
          onProgress: progress.onProgress,
        }),
      ).finally(() => progress.finish());
      const files = dryRun ? await dryRunFiles(table.fileIO, summary.deleted ?? [], ctx.signal) : undefined;
      if (args.options.json) {
        await writeJsonSummary(ctx.stdout, expireJson(table.location, summary, files), ctx.signal);
        return;
      }
      if (files) await printDryRun(ctx, files, summary.bytesFreed, 'file(s)');
      await printLine(ctx, expireText(summary));
    });
  },
});
