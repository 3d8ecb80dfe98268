/**
 * The table report on tables Java Paimon wrote (read-only): per snapshot, rows added minus rows
 * removed equal the `deltaRecordCount` Java recorded, and the live files the report streams match
 * what the scan planner folds. Skips with a notice when the fixtures are absent.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { inspectTable } from '@tidemark/maintenance';
import { fixturesDir } from './support/fixtures.js';

const dir = fixturesDir('inspect on Java-written tables');
const tables: string[] = [];
if (dir !== null) {
  for (const fixture of readdirSync(dir, { withFileTypes: true })) {
    if (!fixture.isDirectory()) continue;
    for (const db of readdirSync(join(dir, fixture.name), { withFileTypes: true })) {
      if (!db.isDirectory() || !db.name.endsWith('.db')) continue;
      for (const t of readdirSync(join(dir, fixture.name, db.name), { withFileTypes: true })) {
        if (t.isDirectory()) tables.push(join(dir, fixture.name, db.name, t.name));
      }
    }
  }
}

describe('inspect on Java-written tables', () => {
  (tables.length > 0 ? it : it.skip).each(tables.length > 0 ? tables : ['none'])('%s', async (location) => {
    const table = await openTable(location);
    try {
      const report = await inspectTable(table, { maintenance: false });
      const ids = await table.snapshotManager.sortedIds();
      expect(report.timeline.snapshots.map((s) => s.id)).toEqual(ids);
      for (const s of report.timeline.snapshots) {
        const snapshot = await table.snapshotManager.snapshot(s.id);
        expect(s.kind).toBe(snapshot.commitKind);
        if (snapshot.deltaRecordCount !== undefined)
          expect(s.rowsAdded - s.rowsRemoved, `snapshot ${s.id}`).toBe(snapshot.deltaRecordCount);
      }
      const plan = await table.newRead({}).plan();
      const files = plan.splits.flatMap((split) => split.files);
      expect(report.liveFiles.files).toBe(files.length);
      expect(report.liveFiles.bytes).toBe(files.reduce((n, f) => n + f.meta.fileSize, 0));
      expect(report.liveFiles.rows).toBe(files.reduce((n, f) => n + f.meta.rowCount, 0));
      expect(report.liveFiles.partitions).toBe(new Set(plan.splits.map((s) => s.partitionPath)).size);
      expect(report.fileSizes.histogram.reduce((a, b) => a + b, 0)).toBe(files.length);
      const latest = (await table.snapshotManager.latest())!;
      if (latest.totalRecordCount !== undefined) expect(report.liveFiles.rows).toBe(latest.totalRecordCount);
    } finally {
      await table.close();
    }
  });
});
