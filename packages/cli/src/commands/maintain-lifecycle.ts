/**
 * The table-lifecycle jobs of `tidemark maintain`: automatic tags (creation, `tag.num-retained-max`,
 * tags past their `tagTimeRetained`) and partition expiration (tables that set
 * `partition.expiration-time`). Each `maintain` run is one check, as Paimon's expire-partitions and
 * tag procedures are: schedule it at the interval you want checks at.
 */
import { AutoTagState, runAutoTags } from '@tidemark/core';
import { expireTablePartitions } from './expire-partitions.js';
import { expirePartitionsJson, expirePartitionsText, tagsJson, tagsText } from './lifecycle-output.js';
import type { TableRun } from './maintain-run.js';
import { runJob } from './maintenance-shared.js';

/** Creates and expires the table's tags as its `tag.*` options say (see `runAutoTags`). */
export async function maintainTags(run: TableRun): Promise<void> {
  const { ctx, table, dryRun } = run;
  const s = await runJob(ctx, () => runAutoTags(table.context, new AutoTagState(), { now: ctx.now, fullCheck: true, dryRun }));
  run.totals.tagsCreated += s.created.length;
  run.totals.tagsDeleted += s.expiredByCount.length + s.expiredByTime.length;
  const options = table.context.options;
  const configured =
    options.tagAutomaticCreation !== 'none' || options.tagDefaultTimeRetainedMs !== null || options.tagNumRetainedMax !== null;
  const changed = s.created.length + s.expiredByCount.length + s.expiredByTime.length > 0;
  // Tables without tag options only get their tags' retention checked: reported when something expired.
  if (!configured && !changed) return;
  run.result.jobs.tags = tagsJson(run.location, dryRun, s);
  await run.say(`tags: ${tagsText(dryRun, s)}`);
}

/** Drops the expired partitions of a table that sets `partition.expiration-time`. */
export async function expireOldPartitions(run: TableRun): Promise<void> {
  const { ctx, table, dryRun } = run;
  if (table.context.options.partitionExpirationTimeMs === null || table.schema().partitionKeys.length === 0) return;
  const s = await expireTablePartitions(table, ctx, 'maintain', { dryRun });
  run.totals.partitionsDropped += s.partitions.length;
  run.result.jobs.partitions = expirePartitionsJson(run.location, s);
  await run.say(`partitions: ${expirePartitionsText(s)}`);
}
