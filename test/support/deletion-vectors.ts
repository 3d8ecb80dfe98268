/** Checks of deletion-vector tables several suites make. */
import { expect } from 'vitest';
import type { ScanPlan, Table } from '@tidemark/core';

/**
 * The latest snapshot holds no level-0 file (compaction emptied it) and its files hold `liveRows`
 * rows once their deletion vectors are applied: the vectors mark exactly the replaced rows.
 * Returns the plan it checked.
 */
export async function expectCompactedLiveRows(table: Table, liveRows: number): Promise<ScanPlan> {
  const plan = await table.newRead().plan();
  let live = 0;
  for (const split of plan.splits) {
    for (const f of split.files) {
      expect(f.meta.level).toBeGreaterThan(0);
      live += f.meta.rowCount - (split.deletionFiles.get(f.meta.fileName)?.range.cardinality ?? 0);
    }
  }
  expect(live).toBe(liveRows);
  return plan;
}
