/**
 * Reads decode Parquet row groups on the worker pool (both cores) with an ordered, bounded
 * read-ahead, and skip row groups by their statistics. One suite body on local disk and on the real
 * S3 server: a table whose data files hold several row groups each (written with small
 * `rowGroupRows`, which also exercises the parallel row-group encoding of one file) is read
 * - with and without workers: the same rows in the same order;
 * - with projections and filters: exactly the rows of a hand-kept model, while the count of decoded
 *   row groups shows that statistics skipped some (so a wrongly skipped group would lose rows);
 * - slowly: the decoded-but-unconsumed row groups never exceed `readAhead`.
 * A child process that reads through the shared pool exits on its own, also after an error.
 */
import { mkdtempSync, rmSync, truncateSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { ParquetWorkerPool, readParquetFooter, type ParquetDecodeJob } from '@tidemark/format';
import { FileSystemCatalog, type ReadOptions, type Table } from '@tidemark/core';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { runNode } from './support/cli-process.js';
import { columns as tableColumns } from './support/table-definitions.mjs';

const FILE_ROWS = 1_700;
const GROUP_ROWS = 500; // files of groups 500, 500, 500, 200
const COMMITS = 3;
const PARTITIONS = [1, 2];
const BASE_MS = Date.UTC(2024, 0, 1);

interface ModelRow {
  p: number;
  id: bigint;
  k: number;
  s: string | null;
  x: number;
  ts: number;
}

/** Rows of (commit, partition): one data file of contiguous ids. */
function fileRows(commit: number, p: number): ModelRow[] {
  const base = (commit * PARTITIONS.length + PARTITIONS.indexOf(p)) * FILE_ROWS;
  return Array.from({ length: FILE_ROWS }, (_, i) => {
    const id = base + i;
    return {
      p,
      id: BigInt(id),
      k: id % 97,
      s: id % 13 === 0 ? null : `v${String(id).padStart(5, '0')}`,
      x: id / 4,
      ts: BASE_MS + id * 1000,
    };
  });
}

function toBatch(rows: ModelRow[]): arrow.RecordBatch {
  return new arrow.Table({
    p: arrow.makeVector(Int32Array.from(rows, (r) => r.p)),
    id: arrow.makeVector(BigInt64Array.from(rows, (r) => r.id)),
    k: arrow.makeVector(Int32Array.from(rows, (r) => r.k)),
    s: arrow.vectorFromArray(
      rows.map((r) => r.s),
      new arrow.Utf8(),
    ),
    x: arrow.makeVector(Float64Array.from(rows, (r) => r.x)),
    ts: arrow.makeVector(
      arrow.makeData({
        type: new arrow.TimestampMillisecond(),
        length: rows.length,
        nullCount: 0,
        data: BigInt64Array.from(rows, (r) => BigInt(r.ts)),
      }),
    ),
  }).batches[0]!;
}

/** Decode jobs sent to the workers, and the most that were started but not yet consumed. */
class CountingPool extends ParquetWorkerPool {
  started = 0;
  override decodeIpc(job: ParquetDecodeJob, failed: (detail: string, cause?: unknown) => Error): Promise<Uint8Array> {
    this.started++;
    return super.decodeIpc(job, failed);
  }
}

type Out = Record<string, unknown>;

async function readAll(table: Table, options: ReadOptions): Promise<{ rows: Out[]; batches: number }> {
  const rows: Out[] = [];
  let batches = 0;
  for await (const b of table.newRead(options).batches()) {
    batches++;
    for (const r of b) rows.push(r!.toJSON() as Out);
  }
  return { rows, batches };
}

/** Model rows as the read returns them for `columns`. */
function project(rows: readonly ModelRow[], columns: readonly (keyof ModelRow)[]): Out[] {
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, c === 'ts' ? r.ts : r[c]])));
}

const byId = (a: Out, b: Out): number => (BigInt(a['id'] as bigint) < BigInt(b['id'] as bigint) ? -1 : 1);

const pools: ParquetWorkerPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});
const countingPool = (size: number): CountingPool => {
  const p = new CountingPool({ size });
  pools.push(p);
  return p;
};

describe.each(storageBackends('parallel reads'))('parallel reads on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    let wh: BackendWarehouse;
    let table: Table;
    const model: ModelRow[] = [];
    let totalGroups = 0;

    beforeAll(async () => {
      wh = await backend.open();
      const catalog = new FileSystemCatalog(`${wh.root}/wh`, { fileIO: wh.io });
      await catalog.createTable('db.t', {
        fields: tableColumns('p INT', 'id BIGINT NOT NULL', 'k INT', 's STRING', 'x DOUBLE', 'ts TIMESTAMP(3)'),
        partitionKeys: ['p'],
      });
      table = await catalog.getTable('db.t');
      for (let c = 0; c < COMMITS; c++) {
        const writer = table.newBatchWrite({ rowGroupRows: GROUP_ROWS });
        for (const p of PARTITIONS) {
          const rows = fileRows(c, p);
          model.push(...rows);
          // Two input batches per file, so row groups are cut across batch boundaries.
          await writer.write(toBatch(rows.slice(0, 777)));
          await writer.write(toBatch(rows.slice(777)));
        }
        await table.newCommit().commit({ messages: await writer.prepareCommit() });
        await writer.close();
      }
      const plan = await table.newRead().plan();
      for (const split of plan.splits) {
        for (const f of split.files) {
          const footer = await readParquetFooter(wh.io, f.path);
          expect(footer.rowGroups.map((g) => Number(g.numRows))).toEqual([500, 500, 500, 200]);
          totalGroups += footer.rowGroups.length;
        }
      }
      expect(totalGroups).toBe(COMMITS * PARTITIONS.length * 4);
    });

    afterAll(async () => {
      await wh?.cleanup();
    });

    it('returns the same rows in the same order with two workers as on one thread, and exactly the model', async () => {
      const pool = countingPool(2);
      const parallel = await readAll(table, { decodePool: pool, readAhead: 3 });
      const single = await readAll(table, { decodePool: false, readAhead: 1 });
      expect(pool.started).toBe(totalGroups);
      expect(parallel.batches).toBe(totalGroups); // one batch per row group
      expect(parallel.rows).toEqual(single.rows);
      expect([...parallel.rows].sort(byId)).toEqual(project(model, ['p', 'id', 'k', 's', 'x', 'ts']));
      // Rows of each file keep their order: within a partition, ids of one file ascend.
      let last: Out | undefined;
      for (const r of parallel.rows) {
        if (last && last['p'] === r['p'] && BigInt(r['id'] as bigint) - BigInt(last['id'] as bigint) !== 1n) {
          expect(BigInt(r['id'] as bigint) % BigInt(FILE_ROWS)).toBe(0n); // only at a file boundary
        }
        last = r;
      }
    });

    // `groups`: the row groups whose id range can hold a matching row; the manifest's file statistics
    // skip the other files, the footer's row-group statistics the other groups of the same file.
    const cases: { where: string; columns: (keyof ModelRow)[]; keep: (r: ModelRow) => boolean; groups: number | 'all' }[] = [
      // Crosses the boundary between the 3rd and 4th row group of the first file: both must be read.
      { where: 'id >= 1490 AND id < 1510', columns: ['id', 's'], keep: (r) => r.id >= 1490n && r.id < 1510n, groups: 2 },
      { where: "s = 'v07001'", columns: ['id'], keep: (r) => r.s === 'v07001', groups: 1 },
      {
        where: `ts >= TIMESTAMP '2024-01-01 02:49:59' AND ts <= TIMESTAMP '2024-01-01 02:50:01'`,
        columns: ['ts', 'id'],
        keep: (r) => r.ts >= BASE_MS + 10_199_000 && r.ts <= BASE_MS + 10_201_000,
        groups: 1,
      },
      { where: 'k = 5 OR id = 9999', columns: ['k', 'id'], keep: (r) => r.k === 5 || r.id === 9999n, groups: 'all' },
      { where: 'x > 2549.5 AND p = 2', columns: ['x'], keep: (r) => r.x > 2549.5 && r.p === 2, groups: 1 },
      { where: 'x >= 250 AND x < 250.5', columns: ['id'], keep: (r) => r.x >= 250 && r.x < 250.5, groups: 1 },
    ];
    for (const c of cases) {
      it(`'${c.where}' with columns ${c.columns.join(', ')} returns exactly the model's rows, decoding ${c.groups} row groups`, async () => {
        const pool = countingPool(2);
        const { rows } = await readAll(table, { where: c.where, columns: c.columns, decodePool: pool });
        const expected = project(model.filter(c.keep), c.columns);
        expect(expected.length).toBeGreaterThan(0);
        const sort = c.columns.includes('id')
          ? (a: Out[]) => [...a].sort(byId)
          : (a: Out[]) => [...a].sort((x, y) => Number(x['x']) - Number(y['x']));
        expect(sort(rows)).toEqual(sort(expected));
        expect(pool.started).toBe(c.groups === 'all' ? totalGroups : c.groups);
      });
    }

    it('keeps at most readAhead decoded row groups waiting for a slow consumer', async () => {
      const pool = countingPool(2);
      const readAhead = 3;
      let consumed = 0;
      let maxAhead = 0;
      for await (const batch of table.newRead({ decodePool: pool, readAhead }).batches()) {
        consumed++;
        expect(batch.numRows).toBeGreaterThan(0);
        // A slow consumer: let every started decode finish before taking the next batch.
        while (pool.pending > 0) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setImmediate(r));
        maxAhead = Math.max(maxAhead, pool.started - consumed);
        expect(pool.started - consumed).toBeLessThanOrEqual(readAhead);
      }
      expect(consumed).toBe(totalGroups);
      expect(maxAhead).toBe(readAhead); // it does read ahead, as far as allowed
    });

    it('rejects a readAhead that is not a positive integer, naming the option', async () => {
      await expect(readAll(table, { readAhead: 0 })).rejects.toThrow(/invalid readAhead 0: expected a positive integer/);
    });
  });
});

const distCore = fileURLToPath(new URL('../packages/core/dist/index.js', import.meta.url));
const haveDist = (() => {
  try {
    return readdirSync(fileURLToPath(new URL('../packages/core/dist', import.meta.url))).includes('index.js');
  } catch {
    return false;
  }
})();
if (!haveDist) console.warn(`read-parallel.test: ${distCore} is missing (run npx turbo run build); skipping the process-exit tests`);

describe.skipIf(!haveDist)('a process that reads through the worker pool', () => {
  const worker = fileURLToPath(new URL('./workers/read-exit-worker.mjs', import.meta.url));
  let dir: string;
  let location: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tidemark-read-exit-'));
    const catalog = new FileSystemCatalog(join(dir, 'wh'));
    await catalog.createTable('db.t', {
      fields: tableColumns('id BIGINT NOT NULL', 's STRING'),
    });
    const table = await catalog.getTable('db.t');
    for (let c = 0; c < 3; c++) {
      await table.append(Array.from({ length: 1000 }, (_, i) => ({ id: BigInt(c * 1000 + i), s: `s${i}` })));
    }
    location = join(dir, 'wh', 'db.db', 't');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits on its own with code 0 after reading, without closing anything', async () => {
    const r = await runNode(worker, [location, 'id,s'], { env: { TIDEMARK_PARQUET_WORKERS: '2' }, timeoutMs: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`read 3000 rows, sum(id) ${(2999 * 3000) / 2}\n`);
  });

  it('exits on its own with the error code after a failed read, naming the damaged file', async () => {
    const bucket = join(location, 'bucket-0');
    const damaged = readdirSync(bucket).filter((f) => f.endsWith('.parquet'))[1]!;
    truncateSync(join(bucket, damaged), 40);
    const r = await runNode(worker, [location, 'id'], { env: { TIDEMARK_PARQUET_WORKERS: '2' }, timeoutMs: 30_000 });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(damaged);
    expect(r.stdout).toBe('');
  });
});
