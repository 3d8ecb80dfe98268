/**
 * Child-process tasks of the primary-key compaction benchmark (`node pk-compact-tasks.mjs <task>
 * <json args>`; protocol in lib/measure.mjs). Imports the BUILT packages.
 *
 * Tasks:
 * - `data`: creates the primary-key table `bench.pk` (`id BIGINT NOT NULL` key, `name STRING`,
 *   `amount DOUBLE`, `ts BIGINT`; one bucket) in `warehouse` and commits `runs` level-0 files of
 *   `rows` rows each, written directly in Paimon's key-value layout (keys drawn from
 *   0..2×rows, so runs overlap and later runs update earlier keys; 5 % deletes after the first).
 *   Returns the table location and its data files.
 * - `read`: reads the whole table (merge-on-read of all its sorted runs): rows and ms.
 * - `compact`: compactPrimaryKeyTable(full) on the table: input MB/s.
 * - `raw-rewrite`: the same files read with parquet-wasm (readParquet) and written back with
 *   parquet-wasm (writeParquet, zstd), no table logic: MB/s of input.
 */
import { randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';

import { fileIOFor } from './bench-storage.mjs';
import { childMain } from './measure.mjs';
import { rawParquetRewrite } from './raw-rewrite.mjs';
import { seededRandom } from '../../test/support/seeded-random.mjs';
import { columns, createBenchTable } from './bench-tables.mjs';

const tasks = {
  async data({ warehouse, runs, rows, s3 }) {
    const core = await import('@tidemark/core');
    const format = await import('@tidemark/format');
    const io = await fileIOFor(warehouse, s3);
    const table = await createBenchTable(core, io, warehouse, 'bench.pk', {
      fields: columns('id BIGINT NOT NULL', 'name STRING', 'amount DOUBLE', 'ts BIGINT'),
      primaryKeys: ['id'],
      options: { bucket: '1' },
    });
    const location = table.location;
    const schema = table.schema();
    const kvFields = format.keyValueFileFields([schema.fields[0]], schema.fields);
    const kvSchema = format.toArrowSchema(kvFields);
    const keyType = [schema.fields[0].type];
    const rnd = seededRandom(7);
    let seq = 0n;
    for (let r = 0; r < runs; r++) {
      const keys = new Set();
      while (keys.size < rows) keys.add(Math.floor(rnd() * rows * 2));
      const ids = [...keys].sort((a, b) => a - b).map(BigInt);
      const seqs = ids.map(() => seq++);
      const kinds = ids.map(() => (r > 0 && rnd() < 0.05 ? 3 : 0));
      const col = (values, type) => arrow.vectorFromArray(values, type).data[0];
      const columns = [
        col(ids, new arrow.Int64()),
        col(seqs, new arrow.Int64()),
        col(kinds, new arrow.Int8()),
        col(ids, new arrow.Int64()),
        col(
          ids.map((id) => `name-${id % 997n}-${(id * 7919n) % 100003n}-run${r}`),
          new arrow.Utf8(),
        ),
        col(
          ids.map((id) => Number(id % 10007n) / 7 + r),
          new arrow.Float64(),
        ),
        col(
          ids.map((id) => id * 1000n + BigInt(r)),
          new arrow.Int64(),
        ),
      ];
      const bytes = format.writeParquetFile([core.makeBatch(kvSchema, columns, ids.length)]);
      const name = `data-${randomUUID()}-0.parquet`;
      await io.write(table.paths.dataFilePath('', 0, name), bytes);
      const meta = {
        fileName: name,
        fileSize: bytes.length,
        rowCount: ids.length,
        minKey: format.serializeBinaryRow(keyType, [ids[0]]),
        maxKey: format.serializeBinaryRow(keyType, [ids[ids.length - 1]]),
        keyStats: format.EMPTY_SIMPLE_STATS,
        valueStats: format.EMPTY_SIMPLE_STATS,
        minSequenceNumber: seqs[0],
        maxSequenceNumber: seqs[seqs.length - 1],
        schemaId: schema.id,
        level: 0,
        extraFiles: [],
        creationTime: Date.now(),
        deleteRowCount: kinds.filter((k) => k === 3).length,
        embeddedIndex: null,
        fileSource: 0,
        valueStatsCols: null,
        externalPath: null,
        firstRowId: null,
        writeCols: null,
        writeColsSequences: null,
      };
      const result = await table.newCommit().commit({
        identifier: format.BATCH_COMMIT_IDENTIFIER,
        messages: [{ partition: format.serializeBinaryRow([], []), bucket: 0, totalBuckets: 1, newFiles: [meta] }],
      });
      if (result.status !== 'committed') throw new Error(`commit ${r}: ${result.status}`);
    }
    const plan = await table.newRead().plan();
    const files = plan.files().map((x) => ({ path: x.path, size: x.fileSize }));
    await io.close();
    return { table: location, files };
  },

  async read({ table, s3 }) {
    const core = await import('@tidemark/core');
    const io = await fileIOFor(table, s3);
    const t = await core.openTable(table, { fileIO: io });
    const plan = await t.newRead().plan();
    const t0 = performance.now();
    let rows = 0;
    for await (const batch of t.newRead().batches()) rows += batch.numRows;
    const ms = performance.now() - t0;
    await io.close();
    return {
      rows,
      ms,
      files: plan.files().length,
      runs:
        plan.files().filter((f) => f.level === 0).length +
        new Set(
          plan
            .files()
            .filter((f) => f.level > 0)
            .map((f) => f.level),
        ).size,
    };
  },

  async compact({ table, s3 }) {
    const core = await import('@tidemark/core');
    const maint = await import('@tidemark/maintenance');
    const io = await fileIOFor(table, s3);
    const t = await core.openTable(table, { fileIO: io });
    const t0 = performance.now();
    const s = await maint.compactPrimaryKeyTable(t, { full: true });
    const ms = performance.now() - t0;
    await io.close();
    return { filesBefore: s.filesBefore, filesAfter: s.filesAfter, bytesRead: s.bytesRead, bytesWritten: s.bytesWritten, rows: s.rows, ms };
  },

  'raw-rewrite': rawParquetRewrite,
};

await childMain(tasks);
