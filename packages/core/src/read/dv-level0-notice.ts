/**
 * The notice of a batch read of a deletion-vector primary-key table that skips level-0 files. Such
 * a read shows only compacted files, as Paimon's does, so the rows of a write are invisible from its
 * APPEND snapshot until the COMPACT snapshot that follows (or until someone compacts a
 * `write-only` table). Behaviour stays Java's; the notice keeps the empty result from being silent.
 */
import type { TableContext } from '../table-context.js';
import type { ScanPlan } from '../scan/scan-plan.js';

/**
 * Warns through `ctx.logger` when `plan` holds level-0 files with rows (one message per read).
 *
 * @param timeTravel whether the read asked for a past snapshot (the advice differs).
 */
export function noticeSkippedLevel0(ctx: TableContext, plan: ScanPlan, timeTravel: boolean): void {
  let files = 0;
  let rows = 0;
  for (const split of plan.splits) {
    for (const f of split.files) {
      if (f.meta.level !== 0 || f.meta.rowCount === 0) continue;
      files++;
      rows += f.meta.rowCount;
    }
  }
  if (files === 0) return;
  const what = `${rows} ${rows === 1 ? 'row' : 'rows'} in ${files} level-0 ${files === 1 ? 'file' : 'files'}`;
  const advice = timeTravel
    ? 'they appear in the COMPACT snapshot that follows their write (or read the changes with read --changes / a streaming read)'
    : "they appear once compacted: run 'tidemark compact' (compactPrimaryKeyTable in @tidemark/maintenance), or read the changes with read --changes / a streaming read";
  ctx.logger.warn(
    `${ctx.location}: snapshot ${plan.snapshotId ?? '?'} has ${what} that are not visible to batch reads of a deletion-vector ` +
      `table until compacted (as in Paimon): ${advice}`,
  );
}
