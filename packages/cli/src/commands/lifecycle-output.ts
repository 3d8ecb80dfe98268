/**
 * Output of the table-lifecycle commands (`expire-partitions`, `drop-partition`, the partition and
 * tag jobs of `maintain`): one-line texts, dry-run listings and the `--json` summary objects.
 */
import type { AutoTagSummary, DropPartitionsSummary, DroppedPartition, ExpirePartitionsSummary } from '@tidemark/core';
import type { CommandContext } from '../context.js';
import { formatBytes } from '../output/progress.js';
import { printLine } from './shared.js';

function partitionJson(p: DroppedPartition & { readonly time?: string }): Record<string, unknown> {
  return {
    partition: p.partition,
    spec: p.spec,
    ...(p.time !== undefined ? { time: p.time } : {}),
    records: p.recordCount,
    files: p.fileCount,
    bytes: p.fileSizeInBytes,
  };
}

/** The `--json` summary of a partition drop. */
export function dropJson(command: string, table: string, s: DropPartitionsSummary): Record<string, unknown> {
  return {
    command,
    table,
    dryRun: s.dryRun,
    baseSnapshotId: s.baseSnapshotId,
    partitions: s.partitions.map(partitionJson),
    partitionsDropped: s.partitions.length,
    records: s.recordCount,
    files: s.fileCount,
    bytes: s.fileSizeInBytes,
    snapshotIds: s.snapshotIds,
  };
}

/** The `--json` summary of a partition expiration. */
export function expirePartitionsJson(table: string, s: ExpirePartitionsSummary): Record<string, unknown> {
  return {
    ...dropJson('expire-partitions', table, s),
    strategy: s.strategy,
    expirationTimeMs: s.expirationTimeMs,
    expireBefore: s.expireBefore,
    deferred: s.deferred,
    skipped: s.skipped,
  };
}

/** One line about a drop: what was (or would be) dropped and the snapshot(s) made. */
export function dropText(s: DropPartitionsSummary): string {
  const n = s.partitions.length;
  if (n === 0) return 'no partition to drop';
  const what = `${n} partition(s) (${s.recordCount} record(s), ${s.fileCount} file(s), ${formatBytes(s.fileSizeInBytes)})`;
  if (s.dryRun) return `would drop ${what}`;
  return `dropped ${what} in snapshot ${s.snapshotIds.join(', ')}; older snapshots still read them until snapshot expiration and orphan cleanup reclaim the files`;
}

/** One line about a partition expiration. */
export function expirePartitionsText(s: ExpirePartitionsSummary): string {
  const extra = [
    s.deferred > 0 ? `${s.deferred} more expired partition(s) left for the next run (partition.expiration-max-num)` : '',
    s.skipped.length > 0 ? `${s.skipped.length} partition(s) skipped (time unknown)` : '',
  ].filter((x) => x !== '');
  const base = s.partitions.length === 0 ? `no partition expired (${s.strategy}, before ${s.expireBefore})` : dropText(s);
  return extra.length === 0 ? base : `${base}; ${extra.join('; ')}`;
}

/** Lists each partition of a dry run (or of a run), one line each. */
export async function printPartitions(
  ctx: CommandContext,
  s: { readonly dryRun: boolean; readonly partitions: readonly (DroppedPartition & { readonly time?: string })[] },
): Promise<void> {
  for (const p of s.partitions) {
    const facts = [
      ...(p.time !== undefined ? [`time ${p.time}`] : []),
      `${p.recordCount} record(s)`,
      `${p.fileCount} file(s)`,
      formatBytes(p.fileSizeInBytes),
    ];
    await printLine(ctx, `${s.dryRun ? 'would drop' : 'dropped'} ${p.partition} (${facts.join(', ')})`);
  }
}

/** The `--json` summary of the tag job of `maintain`. */
export function tagsJson(table: string, dryRun: boolean, s: AutoTagSummary): Record<string, unknown> {
  return { table, dryRun, created: s.created, expiredByCount: s.expiredByCount, expiredByTime: s.expiredByTime };
}

/** One line about the tag job of `maintain`. */
export function tagsText(dryRun: boolean, s: AutoTagSummary): string {
  const names = (xs: AutoTagSummary['created']): string => xs.map((x) => `'${x.name}'`).join(', ');
  const parts = [
    s.created.length > 0 ? `${dryRun ? 'would create' : 'created'} ${names(s.created)}` : '',
    s.expiredByCount.length > 0 ? `${dryRun ? 'would delete' : 'deleted'} ${names(s.expiredByCount)} (tag.num-retained-max)` : '',
    s.expiredByTime.length > 0 ? `${dryRun ? 'would delete' : 'deleted'} ${names(s.expiredByTime)} (retention passed)` : '',
  ].filter((x) => x !== '');
  return parts.length === 0 ? 'no tag to create or expire' : parts.join('; ');
}
