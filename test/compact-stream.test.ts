/**
 * Append compaction whose output row groups are encoded while the inputs still decode, on local
 * disk and on the real S3 server: the output holds every input file whole and in row order (read back
 * serially, on this thread, and through the table's parallel read), cut into the even row groups a
 * buffered write would cut; an input that does not decode fails the run with an error naming that file,
 * leaves the table and its files as they were, and lets the process exit on its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import * as arrow from 'apache-arrow';
import { describe, expect, it, vi } from 'vitest';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import { readParquetFile, readParquetFooter, sharedParquetWorkerPool, utf8Vector } from '@tidemark/format';
import type { Table } from '@tidemark/core';
import { compactAppendTable } from '@tidemark/maintenance';
import { outputGroupRows } from '../packages/maintenance/src/compact-append.js';
import { createTable, liveFiles, parquetFilesOnDisk } from '../packages/maintenance/test/compact-helpers.js';
import { itOnS3Warehouse } from './support/table-locations.js';

const SPEC = {
  fields: [
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'name', type: 'STRING' },
    { name: 'amount', type: 'DOUBLE' },
  ],
  options: { bucket: '-1', 'compaction.min.file-num': '2' },
};

// 280,000 rows: two output groups of 140,000 (with two workers), the first full after 5 of the
// 10 inputs, while the read-ahead (4 row groups) has not yet asked for the last input.
const FILES = 10;
const ROWS_PER_FILE = 28_000;

function rows(start: number, n: number): arrow.Table {
  const id = BigInt64Array.from({ length: n }, (_, i) => BigInt(start + i));
  return new arrow.Table({
    id: arrow.makeVector(id),
    name: utf8Vector(Array.from({ length: n }, (_, i) => ((start + i) % 17 === 0 ? null : `name-${((start + i) * 7919) % 100_003}`))),
    amount: arrow.makeVector(Float64Array.from({ length: n }, (_, i) => (start + i) / 7)),
  });
}

async function filled(fileIO: FileIO, warehouse?: string): Promise<Table> {
  const table = await createTable(SPEC, { fileIO, ...(warehouse ? { warehouse } : {}) });
  for (let f = 0; f < FILES; f++) await table.append(rows(f * ROWS_PER_FILE, ROWS_PER_FILE));
  return table;
}

/** Appends a batch's ids (a loop: spreading 140,000 arguments overflows the stack). */
function pushIds(out: bigint[], b: arrow.RecordBatch): void {
  for (const id of b.getChild('id')!.toArray() as BigInt64Array) out.push(id);
}

/**
 * Where `ids` is not the input files one after the other, each whole and in its own row order
 * (files of an unaware-bucket table all start at sequence 0, so their order among each other is the
 * plan's): -1 when it is.
 */
function firstOutOfPlace(ids: readonly bigint[]): number {
  const starts = new Set<bigint>();
  for (let i = 0; i < ids.length; i++) {
    const start = ids[i - (i % ROWS_PER_FILE)]!;
    if (i % ROWS_PER_FILE === 0 && (start % BigInt(ROWS_PER_FILE) !== 0n || starts.has(start))) return i;
    starts.add(start);
    if (ids[i] !== start + BigInt(i % ROWS_PER_FILE)) return i;
  }
  return -1;
}

/** ids in stored order: the one live file on this thread, and the table's parallel read. */
async function idsOf(table: Table): Promise<{ serial: bigint[]; parallel: bigint[]; groups: bigint[] }> {
  const [file] = await liveFiles(table);
  const path = `${table.location}/${file!}`;
  const serial: bigint[] = [];
  for await (const b of readParquetFile(table.fileIO, path, { pool: false })) pushIds(serial, b);
  const parallel: bigint[] = [];
  for await (const b of table.newRead().batches()) pushIds(parallel, b);
  const groups = (await readParquetFooter(table.fileIO, path)).rowGroups.map((g) => g.numRows);
  return { serial, parallel, groups };
}

async function compactsInOrder(table: Table): Promise<void> {
  expect(await liveFiles(table)).toHaveLength(FILES);
  const pool = sharedParquetWorkerPool();
  const decodes = vi.spyOn(pool, 'decodeIpc');
  // Groups of rows arriving as Arrow, and groups joined from the decode workers' IPC streams.
  const encodes = vi.spyOn(pool, 'encodeIpc');
  const joined = vi.spyOn(pool, 'encodeIpcSegments');
  let s;
  let order: { decodes: number[]; encodes: number[] };
  try {
    s = await compactAppendTable(table, { full: true });
  } finally {
    order = {
      decodes: [...decodes.mock.invocationCallOrder],
      encodes: [...encodes.mock.invocationCallOrder, ...joined.mock.invocationCallOrder],
    };
    decodes.mockRestore();
    encodes.mockRestore();
    joined.mockRestore();
  }
  expect(s.snapshotId).not.toBeNull();
  if (outputGroupRows(FILES * ROWS_PER_FILE) < FILES * ROWS_PER_FILE) {
    // The overlap itself: the first output group went to the pool before the last input was
    // handed to it for decoding (a buffered write encodes only after every input is read).
    expect(order.encodes.length).toBeGreaterThan(1);
    expect(order.decodes).toHaveLength(FILES);
    expect(Math.min(...order.encodes)).toBeLessThan(Math.max(...order.decodes));
  }
  expect(s.filesAfter).toBe(1);
  const { serial, parallel, groups } = await idsOf(table);
  expect(serial).toHaveLength(FILES * ROWS_PER_FILE);
  expect(firstOutOfPlace(serial)).toBe(-1);
  // The table's parallel read returns the file's rows in the same order.
  expect(parallel).toHaveLength(serial.length);
  expect(parallel.findIndex((id, i) => id !== serial[i])).toBe(-1);
  // With two workers (the default on two cores or more): two groups of 140,000 rows.
  const groupRows = outputGroupRows(FILES * ROWS_PER_FILE);
  const total = FILES * ROWS_PER_FILE;
  expect(groups).toEqual(
    Array.from({ length: Math.ceil(total / groupRows) }, (_, g) => BigInt(Math.min(groupRows, total - g * groupRows))),
  );
  // Every value, not just ids: the other columns come back as written for each id.
  const bad: string[] = [];
  let i = 0;
  for await (const b of table.newRead().batches()) {
    const id = b.getChild('id')!.toArray() as BigInt64Array;
    const name = b.getChild('name')!.toArray() as unknown[];
    const amount = b.getChild('amount')!.toArray() as Float64Array;
    for (let k = 0; k < b.numRows; k++, i++) {
      const n = Number(id[k]);
      const want = n % 17 === 0 ? null : `name-${(n * 7919) % 100_003}`;
      if ((name[k] ?? null) !== want || amount[k] !== n / 7) bad.push(`row ${i} (id ${n}): ${String(name[k])}, ${amount[k]}`);
    }
  }
  expect(bad.slice(0, 5)).toEqual([]);
  expect(i).toBe(FILES * ROWS_PER_FILE);
}

describe('outputGroupRows', () => {
  it('cuts a window into the groups a buffered write would cut: one per worker, at least ~131,072 rows, even', () => {
    expect(outputGroupRows(500_000, 2)).toBe(250_000);
    expect(outputGroupRows(1_000_000, 2)).toBe(500_000);
    expect(outputGroupRows(280_000, 2)).toBe(140_000);
    expect(outputGroupRows(200_000, 2)).toBe(100_000);
    expect(outputGroupRows(90_000, 2)).toBe(131_072);
    expect(outputGroupRows(3_000_000, 2)).toBe(1_048_576);
    expect(outputGroupRows(500_000, 0)).toBe(1_048_576);
  });
});

describe('append compaction with streamed output row groups', () => {
  it('keeps every input whole and in order, in even row groups (local disk)', async () => {
    await compactsInOrder(await filled(new LocalFileIO()));
  }, 120_000);

  itOnS3Warehouse(
    'streamed compaction on S3',
    'keeps every input whole and in order, in even row groups (S3 server)',
    'compact-stream',
    async (fileIO, root) => compactsInOrder(await filled(fileIO, root)),
    180_000,
  );

  it('fails on an input that does not decode, naming it, and leaves the table and its files as they were', async () => {
    const table = await filled(new LocalFileIO());
    const files = await liveFiles(table);
    // Garbage in the pages of the third input (size kept, so the footer still opens).
    const victim = `${table.location}/${files[2]!}`;
    const fh = await open(victim, 'r+');
    await fh.write(Buffer.alloc(20_000, 0x5a), 0, 20_000, 1_000);
    await fh.close();
    const snapshot = (await table.snapshotManager.latest())!.id;
    const onDisk = await parquetFilesOnDisk(table);
    await expect(compactAppendTable(table, { full: true })).rejects.toThrow(files[2]!.split('/').pop()!);
    expect((await table.snapshotManager.latest())!.id).toBe(snapshot);
    expect((await parquetFilesOnDisk(table)).sort()).toEqual(onDisk.sort());

    // The same failure in a process of its own: it reports the file and exits without waiting on a worker.
    const maintenance = fileURLToPath(new URL('../packages/maintenance/dist/index.js', import.meta.url));
    const core = fileURLToPath(new URL('../packages/core/dist/index.js', import.meta.url));
    if (!existsSync(maintenance) || !existsSync(core)) {
      console.warn('compact-stream.test: packages are not built; skipping the process-exit check');
      return;
    }
    const script = `
      import { openTable } from ${JSON.stringify(core)};
      import { compactAppendTable } from ${JSON.stringify(maintenance)};
      const table = await openTable(${JSON.stringify(table.location)});
      try { await compactAppendTable(table, { full: true }); console.log('compacted'); }
      catch (e) { console.log(e.name + ': ' + e.message); process.exitCode = 3; }
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.error).toBeUndefined();
    expect(child.status).toBe(3);
    expect(child.stdout).toContain(files[2]!.split('/').pop()!);
    expect((await parquetFilesOnDisk(table)).sort()).toEqual(onDisk.sort());
  }, 120_000);
});
