/**
 * Child-process tasks of the inspect benchmark (`node inspect-tasks.mjs <task> <json args>`); each
 * run measures one thing in a fresh process. See lib/measure.mjs for the protocol.
 *
 * Tasks:
 * - `inspect`: `inspectTable` of the latest snapshot, with or without the maintenance dry runs;
 *   returns the time, the live files the report counted and the RSS growth over the run.
 * - `plan`: scan planning of the same snapshot (`newRead().plan()`), the reference that holds every
 *   live file in memory by design.
 */
import { childMain, rssMiB } from './measure.mjs';

const tasks = {
  async inspect({ root, maintenance }) {
    const core = await import('@tidemark/core');
    const { inspectTable } = await import('@tidemark/maintenance');
    const table = await core.openTable(root);
    globalThis.gc?.();
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    const report = await inspectTable(table, { maintenance });
    const ms = performance.now() - t0;
    await table.close();
    return {
      ms,
      baseRssMiB,
      files: report.liveFiles.files,
      rows: report.liveFiles.rows,
      partitions: report.liveFiles.partitions,
      manifests: report.manifests.count,
      compactionFiles: report.maintenance?.compaction.status === 'planned' ? report.maintenance.compaction.files : null,
      orphansScanned: report.maintenance?.orphans.status === 'planned' ? report.maintenance.orphans.filesScanned : null,
    };
  },

  async plan({ root }) {
    const core = await import('@tidemark/core');
    const table = await core.openTable(root);
    globalThis.gc?.();
    const baseRssMiB = rssMiB();
    const t0 = performance.now();
    const plan = await table.newRead({}).plan();
    const ms = performance.now() - t0;
    const files = plan.splits.reduce((s, x) => s + x.files.length, 0);
    await table.close();
    return { ms, baseRssMiB, files };
  },
};

await childMain(tasks);
