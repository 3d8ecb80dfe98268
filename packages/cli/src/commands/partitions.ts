import { defineCommand } from '../command.js';
import { formatBytes } from '../output/progress.js';
import { stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, printLine, snapshotOption, tableArgument, textTable, withTable } from './shared.js';

/** `tidemark partitions`: Paimon's `$partitions` system table. */
export const partitionsCommand = defineCommand({
  name: 'partitions',
  summary: 'list partitions with their record count, file count, size and last update',
  usage: {
    synopsis: ['partitions <table> [--snapshot N] [--json]'],
    description:
      "Each partition of the latest snapshot (or --snapshot N), as Paimon's $partitions system table shows it: records, " +
      'data files, their size, and the creation time of the newest file (UTC).',
    positionals: [tableArgument],
    options: {
      snapshot: { ...snapshotOption, description: 'list the partitions of this snapshot (default latest)' },
      json: { type: 'boolean', description: 'one JSON object per partition' },
    },
  },
  async run(args, ctx) {
    await withTable(args.named['table']!, ctx, async (table) => {
      const entries = await table.partitions({
        ...(args.options.snapshot !== undefined ? { snapshotId: args.options.snapshot } : {}),
        signal: ctx.signal,
      });
      const updated = (ms: number | null): string => (ms === null ? '' : isoTime(ms));
      if (args.options.json) {
        for (const e of entries) {
          const o = new Map<string, JsonValue>([
            ['partition', e.path],
            ['spec', new Map(Object.entries(e.spec))],
            ['recordCount', e.recordCount],
            ['fileCount', e.fileCount],
            ['fileSizeInBytes', e.fileSizeInBytes],
            ['lastUpdateTime', e.lastFileCreationTime === null ? null : updated(e.lastFileCreationTime)],
            ['totalBuckets', e.totalBuckets],
          ]);
          await printLine(ctx, stringifyJson(o));
        }
        return;
      }
      if (table.schema().partitionKeys.length === 0 || entries.length === 0) {
        await printLine(ctx, table.schema().partitionKeys.length === 0 ? 'the table is not partitioned' : 'the table has no data');
        return;
      }
      const rows = entries.map((e) => [
        e.path,
        String(e.recordCount),
        String(e.fileCount),
        formatBytes(e.fileSizeInBytes),
        updated(e.lastFileCreationTime),
      ]);
      ctx.stdout.write(textTable(['partition', 'records', 'files', 'size', 'lastUpdate'], rows, [false, true, true, true]));
    });
  },
});
