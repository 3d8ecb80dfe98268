/**
 * Child-process tasks of the deletion-vector benchmark (`node dv-tasks.mjs <task> <json args>`;
 * protocol in lib/measure.mjs). Imports the BUILT packages.
 *
 * Tasks:
 * - `write`: creates the primary-key table `bench.t` (`id BIGINT NOT NULL` key, `name STRING`,
 *   `amount DOUBLE`; 2 buckets) with or without `deletion-vectors.enabled`, and commits `commits`
 *   batch writes (`Table.append`) of `rows` rows each, 30 % of them updates of earlier keys.
 *   With `runs` set, `num-sorted-run.compaction-trigger` is raised and each write is half the
 *   size of the one before, so that each write leaves one more sorted run (DV tables: a level >= 1
 *   run; `write-only` tables: a level-0 run). Reports the ms of all writes, the distinct keys
 *   written (`rows`) and the sorted runs left per bucket.
 * - `read`: reads the whole latest snapshot: rows and ms.
 */
import { fileIOFor } from './bench-storage.mjs';
import { childMain } from './measure.mjs';
import { seededRandom } from '../../test/support/seeded-random.mjs';
import { columns, createBenchTable } from './bench-tables.mjs';

const tasks = {
  async write({ warehouse, dv, writeOnly, commits, rows, s3, runs }) {
    const core = await import('@tidemark/core');
    const io = await fileIOFor(warehouse, s3);
    const options = { bucket: '2', 'snapshot.num-retained.min': '1000', 'snapshot.time-retained': '1000 d' };
    if (dv) options['deletion-vectors.enabled'] = 'true';
    if (writeOnly) options['write-only'] = 'true';
    if (runs) options['num-sorted-run.compaction-trigger'] = '20';
    const table = await createBenchTable(core, io, warehouse, 'bench.t', {
      fields: columns('id BIGINT NOT NULL', 'name STRING', 'amount DOUBLE'),
      primaryKeys: ['id'],
      options,
    });
    const location = table.location;
    const rnd = seededRandom(42);
    let next = 0;
    const t0 = performance.now();
    for (let c = 0; c < commits; c++) {
      const batch = [];
      // Sorted-run mode: each write half the size of the one before, so that size-ratio
      // compaction keeps every write's run apart (as in a bucket that has grown over time).
      const n = runs ? Math.max(1, Math.floor(rows / 2 ** c)) : rows;
      for (let i = 0; i < n; i++) {
        const update = next > 0 && rnd() < 0.3;
        const id = update ? BigInt(Math.floor(rnd() * next)) : BigInt(next++);
        batch.push({ id, name: `n${c}-${i}`, amount: rnd() * 1000 });
      }
      const r = await table.append(batch);
      if (r.status !== 'committed') throw new Error(`write ${c} did not commit: ${r.status}`);
    }
    const ms = performance.now() - t0;
    const plan = await table.newRead().plan();
    const runsPerBucket = plan.splits.map((s) => {
      const levels = new Set(s.files.filter((f) => f.meta.level > 0).map((f) => f.meta.level));
      return levels.size + s.files.filter((f) => f.meta.level === 0).length;
    });
    const vectors = plan.splits.reduce((n, s) => n + s.deletionFiles.size, 0);
    return { table: location, ms, rows: next, runsPerBucket, filesWithVectors: vectors };
  },

  async read({ table, s3 }) {
    const core = await import('@tidemark/core');
    const t = await core.openTable(table, { fileIO: await fileIOFor(table, s3) });
    const t0 = performance.now();
    let rows = 0;
    for await (const b of t.newRead().batches()) rows += b.numRows;
    return { ms: performance.now() - t0, rows };
  },
};

await childMain(tasks);
