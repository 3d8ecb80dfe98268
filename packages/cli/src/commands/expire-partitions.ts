import type { ExpirePartitionsOptions, Table } from '@tidemark/core';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { parseDuration } from '../options/duration.js';
import { writeJsonSummary } from '../output/progress.js';
import { expirePartitionsJson, expirePartitionsText, printPartitions } from './lifecycle-output.js';
import { runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable } from './shared.js';

/** Runs a partition expiration for a command, warnings about skipped partitions going to stderr. */
export function expireTablePartitions(
  table: Table,
  ctx: CommandContext,
  command: string,
  options: Omit<ExpirePartitionsOptions, 'signal' | 'now' | 'logger'>,
): ReturnType<Table['expirePartitions']> {
  return runJob(ctx, () =>
    table.expirePartitions({
      ...options,
      signal: ctx.signal,
      now: ctx.now,
      logger: { warn: (m) => ctx.stderr.write(`tidemark ${command}: warning: ${m}\n`) },
    }),
  );
}

/** `tidemark expire-partitions`. */
export const expirePartitionsCommand = defineCommand({
  name: 'expire-partitions',
  summary: 'drop partitions older than the expiration time',
  usage: {
    synopsis: [
      'expire-partitions <table> [--expiration-time <duration>] [--strategy values-time|update-time] [--max-expires N] [--dry-run] [--json]',
    ],
    description:
      "Paimon's partition expiration: values-time reads each partition's time from its values (partition.timestamp-pattern, " +
      'partition.timestamp-formatter; default yyyy-MM-dd[ HH:mm:ss]), update-time uses the creation of its newest file. ' +
      'Partitions older than now minus the expiration time are dropped in one OVERWRITE commit; older snapshots still read them. ' +
      'Defaults come from the table options (partition.expiration-time, partition.expiration-strategy, ' +
      'partition.expiration-max-num 100). A partition whose time cannot be read is skipped with a warning. Durations: 12h, 7d, 30d.',
    positionals: [tableArgument],
    options: {
      'expiration-time': {
        type: 'string',
        valueName: 'duration',
        description: 'expire partitions older than this (default partition.expiration-time)',
      },
      strategy: {
        type: 'string',
        valueName: 'strategy',
        choices: ['values-time', 'update-time'],
        description: 'how a partition gets its time (default partition.expiration-strategy)',
      },
      'max-expires': {
        type: 'integer',
        min: 1,
        valueName: 'N',
        description: 'drop at most N partitions (default partition.expiration-max-num)',
      },
      'dry-run': { ...dryRunOption, description: 'list the partitions that would be dropped, with their time, records, files and size' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const o = args.options;
    const expirationTimeMs = o['expiration-time'] !== undefined ? parseDuration(o['expiration-time'], '--expiration-time') : undefined;
    const dryRun = o['dry-run'];
    await withTable(args.named['table']!, ctx, async (table) => {
      const s = await expireTablePartitions(table, ctx, 'expire-partitions', {
        ...(expirationTimeMs !== undefined ? { expirationTimeMs } : {}),
        ...(o.strategy !== undefined ? { strategy: o.strategy as 'values-time' | 'update-time' } : {}),
        ...(o['max-expires'] !== undefined ? { maxExpires: o['max-expires'] } : {}),
        dryRun,
      });
      if (o.json) {
        await writeJsonSummary(ctx.stdout, expirePartitionsJson(table.location, s), ctx.signal);
        return;
      }
      await printPartitions(ctx, s);
      await printLine(ctx, expirePartitionsText(s));
    });
  },
});
