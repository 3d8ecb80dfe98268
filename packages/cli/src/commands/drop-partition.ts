import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { writeJsonSummary } from '../output/progress.js';
import { dropJson, dropText, printPartitions } from './lifecycle-output.js';
import { runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable } from './shared.js';

/** `--partition k=v[,k2=v2]` values as partition specs. */
export function parsePartitionSpecs(values: readonly string[], command: string): Array<Record<string, string>> {
  return values.map((value) => {
    const spec: Record<string, string> = {};
    for (const kv of value.split(',')) {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new UsageError(`option '--partition' needs k=v[,k2=v2], got '${value}'`, command);
      const key = kv.slice(0, eq).trim();
      if (Object.hasOwn(spec, key)) throw new UsageError(`option '--partition' names '${key}' twice in '${value}'`, command);
      spec[key] = kv.slice(eq + 1);
    }
    return spec;
  });
}

/** `tidemark drop-partition`. */
export const dropPartitionCommand = defineCommand({
  name: 'drop-partition',
  summary: 'drop partitions in one commit (older snapshots still read them)',
  usage: {
    synopsis: ['drop-partition <table> --partition k=v[,k2=v2]... [--dry-run] [--json]'],
    description:
      "Paimon's drop-partition commit: one OVERWRITE snapshot deletes every file of the partitions matching any --partition " +
      '(each naming some or all partition keys; values as in the partition directory names). Time travel to older snapshots ' +
      'still reads them; snapshot expiration and orphan cleanup reclaim the files. A --partition that matches nothing is an error.',
    positionals: [tableArgument],
    options: {
      partition: { type: 'multiple', valueName: 'k=v[,k2=v2]', description: 'a partition to drop' },
      'dry-run': { ...dryRunOption, description: 'list the partitions that would be dropped, with their records, files and size' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    if (args.options.partition.length === 0) throw new UsageError("give at least one '--partition k=v'", 'drop-partition');
    const specs = parsePartitionSpecs(args.options.partition, 'drop-partition');
    const dryRun = args.options['dry-run'];
    await withTable(args.named['table']!, ctx, async (table) => {
      const s = await runJob(ctx, () => table.dropPartitions(specs, { dryRun, signal: ctx.signal, now: ctx.now }));
      if (args.options.json) {
        await writeJsonSummary(ctx.stdout, dropJson('drop-partition', table.location, s), ctx.signal);
        return;
      }
      await printPartitions(ctx, s);
      await printLine(ctx, dropText(s));
    });
  },
});
