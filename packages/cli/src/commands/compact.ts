import {
  compactAppendTable,
  compactPrimaryKeyTable,
  type CompactAppendSummary,
  type CompactPrimaryKeySummary,
} from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { writeJsonSummary } from '../output/progress.js';
import { parseKeyValues } from './create.js';
import { CompactProgressBar, compactJson, compactText, runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark compact`: append tables bin-pack small files, primary-key tables run LSM compaction. */
export const compactCommand = defineCommand({
  name: 'compact',
  summary: 'compact data files: bin-pack small files (append tables) or merge sorted runs (primary-key tables)',
  usage: {
    synopsis: [
      'compact <table> [--partition k=v]... [--where "<predicate>"] [--full] [--max-files N] [--copy-row-groups] [--dry-run] [--json]',
    ],
    description:
      'Append tables: per partition and bucket, small files (below target-file-size) are rewritten together once there are ' +
      'compaction.min.file-num of them (default 5). Primary-key tables: per partition and bucket, the sorted runs picked by ' +
      "Paimon's universal compaction are merged (with --full: every file, into the top level, dropping deleted keys). " +
      'Either way the result is committed as one COMPACT snapshot; writes may continue meanwhile.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      partition: { type: 'multiple', valueName: 'k=v', description: 'only this partition (repeat the option for each key)' },
      where: { type: 'string', valueName: 'predicate', description: 'only partitions matching this predicate on partition columns' },
      full: {
        type: 'boolean',
        description:
          'append tables: rewrite every small file, even fewer than compaction.min.file-num; primary-key tables: merge every file into the top level',
      },
      'max-files': {
        type: 'integer',
        min: 1,
        valueName: 'N',
        description: 'append tables: rewrite at most N input files in this run (default 1000)',
      },
      'copy-row-groups': {
        type: 'boolean',
        description:
          'append tables: copy the row groups of inputs whose groups hold 65,536 rows or more without decoding them (much less CPU; the output is larger than a rewrite)',
      },
      'dry-run': { ...dryRunOption, description: 'list the files that would be rewritten' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const partition = parseKeyValues(args.options.partition, '--partition', 'compact');
    const dryRun = args.options['dry-run'];
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const keys = table.schema().partitionKeys;
      for (const k of partition.keys()) {
        if (!keys.includes(k))
          throw new UsageError(
            `option '--partition': '${k}' is not a partition key of the table (${keys.join(', ') || 'it has none'})`,
            'compact',
          );
      }
      const pk = table.isPrimaryKeyTable;
      if (pk && args.options['max-files'] !== undefined)
        throw new UsageError("option '--max-files' applies to append tables only", 'compact');
      if (pk && args.options['copy-row-groups'] === true)
        throw new UsageError("option '--copy-row-groups' applies to append tables only", 'compact');
      const bar = new CompactProgressBar(ctx, 'compacting');
      const common = {
        ...(partition.size > 0 ? { partition: Object.fromEntries(partition) } : {}),
        ...(args.options.where !== undefined ? { where: args.options.where } : {}),
        full: args.options.full,
        dryRun,
        signal: ctx.signal,
        onProgress: bar.onProgress,
      };
      const summary: CompactAppendSummary | CompactPrimaryKeySummary = await runJob(ctx, () =>
        pk
          ? compactPrimaryKeyTable(table, common)
          : compactAppendTable(table, {
              ...common,
              ...(args.options['max-files'] !== undefined ? { maxFilesPerRun: args.options['max-files'] } : {}),
              ...(args.options['copy-row-groups'] === true ? { copyRowGroups: true } : {}),
            }),
      ).finally(() => bar.finish());
      if (args.options.json) {
        await writeJsonSummary(ctx.stdout, compactJson(table.location, summary), ctx.signal);
        return;
      }
      for (const w of summary.plan ?? []) {
        const p =
          Object.entries(w.partition)
            .map(([k, v]) => `${k}=${v}`)
            .join('/') || '-';
        const level = 'outputLevel' in w ? `\t-> level ${String(w.outputLevel)}` : '';
        await printLine(
          ctx,
          `${p}\tbucket-${w.bucket}\t${w.files.length} file(s)\t${w.bytes} bytes\t${w.rows} rows${level}\t${w.files.join(',')}`,
        );
      }
      await printLine(ctx, compactText(summary));
    });
  },
});
