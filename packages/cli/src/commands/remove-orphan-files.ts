import { DEFAULT_IN_PROGRESS_GRACE_MS, removeOrphanFiles } from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseDuration, parseOlderThan } from '../options/duration.js';
import { formatDuration, writeJsonSummary } from '../output/progress.js';
import { dryRunFiles, orphansJson, orphansText, PhaseProgress, printDryRun, runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable } from './shared.js';

const ONE_HOUR_MS = 3_600_000;

/** `tidemark remove-orphan-files`. */
export const removeOrphanFilesCommand = defineCommand({
  name: 'remove-orphan-files',
  summary: 'delete files under the table that no snapshot, tag or in-flight commit uses',
  usage: {
    synopsis: ['remove-orphan-files <table> [--older-than 1d] [--grace <duration>] [--dry-run] [--json]'],
    description:
      'Only files older than --older-than (default 1d) are deleted. A time in the future is refused; below 1 hour a warning is printed. ' +
      'Files of tidemark writes and commits in progress are protected by their in-flight records whatever --older-than says. ' +
      '--grace additionally keeps every file younger than it (default 0); set it (e.g. 1h) when writers that do not record ' +
      'in-flight files (Java Paimon, older tidemark versions) may be committing.',
    positionals: [tableArgument],
    options: {
      'older-than': { type: 'string', valueName: 'duration|timestamp', description: 'only delete files older than this (default 1d)' },
      grace: { type: 'string', valueName: 'duration', description: 'never delete files younger than this (default 0)' },
      'dry-run': { ...dryRunOption, description: 'list what would be deleted and its total size' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const now = ctx.now();
    const { cutoffMs } = parseOlderThan(args.options['older-than'] ?? '1d', '--older-than', now);
    if (cutoffMs > now)
      throw new UsageError(
        `option '--older-than' is in the future; orphan cleanup would delete files being written now`,
        'remove-orphan-files',
      );
    const graceMs = args.options.grace !== undefined ? parseDuration(args.options.grace, '--grace') : DEFAULT_IN_PROGRESS_GRACE_MS;
    if (now - cutoffMs < ONE_HOUR_MS) {
      const kept =
        graceMs > now - cutoffMs ? ` (files younger than the ${formatDuration(graceMs)} grace period are still kept; see --grace)` : '';
      ctx.stderr.write(
        `tidemark: warning: --older-than is under 1 hour; files of writers that do not record in-flight files (Java Paimon) may be deleted${kept}\n`,
      );
    }
    const dryRun = args.options['dry-run'];
    await withTable(args.named['table']!, ctx, async (table) => {
      const progress = new PhaseProgress(ctx, 'removing orphan files');
      const summary = await runJob(ctx, () =>
        removeOrphanFiles(table, {
          olderThanMs: cutoffMs,
          inProgressGraceMs: graceMs,
          dryRun,
          signal: ctx.signal,
          now: ctx.now,
          onProgress: progress.onProgress,
        }),
      ).finally(() => progress.finish());
      const files = dryRun ? await dryRunFiles(table.fileIO, summary.deleted ?? [], ctx.signal) : undefined;
      if (args.options.json) {
        await writeJsonSummary(
          ctx.stdout,
          orphansJson(table.location, summary, Math.min(cutoffMs, now - graceMs), graceMs, files),
          ctx.signal,
        );
        return;
      }
      if (files) await printDryRun(ctx, files, summary.bytesFreed, 'orphan file(s)');
      await printLine(ctx, orphansText(summary));
    });
  },
});
