import { compactAppendTable } from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { writeJsonSummary } from '../output/progress.js';
import { parseKeyValues } from './create.js';
import { CompactProgressBar, compactJson, compactText, runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable } from './shared.js';

/** `tidemark compact`. */
export const compactCommand = defineCommand({
  name: 'compact',
  summary: 'bin-pack small data files of an append table into larger ones',
  usage: {
    synopsis: ['compact <table> [--partition k=v]... [--where "<predicate>"] [--full] [--max-files N] [--dry-run] [--json]'],
    description:
      'Per partition and bucket, small files (below target-file-size) are rewritten together once there are compaction.min.file-num ' +
      'of them (default 5), and committed as one COMPACT snapshot. Appends may continue meanwhile.',
    positionals: [tableArgument],
    options: {
      partition: { type: 'multiple', valueName: 'k=v', description: 'only this partition (repeat the option for each key)' },
      where: { type: 'string', valueName: 'predicate', description: 'only partitions matching this predicate on partition columns' },
      full: { type: 'boolean', description: 'rewrite every small file, even fewer than compaction.min.file-num' },
      'max-files': { type: 'integer', min: 1, valueName: 'N', description: 'rewrite at most N input files in this run (default 1000)' },
      'dry-run': { ...dryRunOption, description: 'list the files that would be rewritten' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const partition = parseKeyValues(args.options.partition, '--partition', 'compact');
    const dryRun = args.options['dry-run'];
    await withTable(args.named['table']!, ctx, async (table) => {
      const keys = table.schema().partitionKeys;
      for (const k of partition.keys()) {
        if (!keys.includes(k)) throw new UsageError(`option '--partition': '${k}' is not a partition key of the table (${keys.join(', ') || 'it has none'})`, 'compact');
      }
      const bar = new CompactProgressBar(ctx, 'compacting');
      const summary = await runJob(ctx, () =>
        compactAppendTable(table, {
          ...(partition.size > 0 ? { partition: Object.fromEntries(partition) } : {}),
          ...(args.options.where !== undefined ? { where: args.options.where } : {}),
          ...(args.options['max-files'] !== undefined ? { maxFilesPerRun: args.options['max-files'] } : {}),
          full: args.options.full,
          dryRun,
          signal: ctx.signal,
          onProgress: bar.onProgress,
        }),
      ).finally(() => bar.finish());
      if (args.options.json) {
        await writeJsonSummary(ctx.stdout, compactJson(table.location, summary), ctx.signal);
        return;
      }
      for (const w of summary.plan ?? []) {
        const p = Object.entries(w.partition).map(([k, v]) => `${k}=${v}`).join('/') || '-';
        await printLine(ctx, `${p}\tbucket-${w.bucket}\t${w.files.length} file(s)\t${w.bytes} bytes\t${w.rows} rows\t${w.files.join(',')}`);
      }
      await printLine(ctx, compactText(summary));
    });
  },
});
