/**
 * Helpers of the compaction tests: a typed append table, an exact row checksum, and a FileIO hook
 * that runs another commit right before the compaction's snapshot create.
 */
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import type { DataFileMeta } from '@tidemark/format';
import { FileSystemCatalog, dataManifests, liveEntries, openTable, valueReader, type Table, type TableSpec } from '@tidemark/core';

export const TYPED_SPEC: TableSpec = {
  fields: [
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'dt', type: 'STRING' },
    { name: 'i', type: 'INT' },
    { name: 'dec', type: 'DECIMAL(10, 2)' },
    { name: 'bigdec', type: 'DECIMAL(38, 5)' },
    { name: 'ts3', type: 'TIMESTAMP(3)' },
    { name: 'ts9', type: 'TIMESTAMP(9)' },
    { name: 'ltz', type: 'TIMESTAMP(6) WITH LOCAL TIME ZONE' },
    { name: 's', type: 'STRING' },
    { name: 'bin', type: 'BYTES' },
    { name: 'd', type: 'DATE' },
    { name: 'f64', type: 'DOUBLE' },
    { name: 'b', type: 'BOOLEAN' },
  ],
  partitionKeys: ['dt'],
};

/** A row of {@link TYPED_SPEC} with every kind of value (and nulls on a pattern). */
export function typedRow(id: number, dt: string): Record<string, unknown> {
  const nul = id % 7 === 3;
  return {
    id: BigInt(id),
    dt,
    i: nul ? null : id * 31 - 1000,
    dec: nul ? null : `${(id * 1234567) % 99999999}.${String(id % 100).padStart(2, '0')}`,
    bigdec: id % 5 === 0 ? null : `-12345678901234567890123456789012.${String(id).padStart(5, '0').slice(-5)}`,
    ts3: nul ? null : new Date(Date.UTC(1969, 11, 31, 23, 59, 59, id % 1000)),
    ts9: id % 4 === 1 ? null : `2024-02-29 12:34:56.${String(123456789 + id).slice(-9)}`,
    ltz: `2001-09-09 01:46:40.${String(id).padStart(6, '0').slice(-6)}`,
    s: id % 6 === 0 ? null : `row ${id} ✓ ${'x'.repeat(id % 40)}`,
    bin: id % 9 === 0 ? null : new Uint8Array([id & 255, 0, 255, (id >> 8) & 255]),
    d: nul ? null : '2024-01-01',
    f64: id % 8 === 2 ? null : id / 3,
    b: id % 3 === 0 ? null : id % 2 === 0,
  };
}

let n = 0;

/** Creates a table on local disk (fresh temp warehouse) or in `warehouse` with `fileIO`. */
export async function createTable(spec: TableSpec, options: { warehouse?: string; fileIO?: FileIO } = {}): Promise<Table> {
  const fileIO = options.fileIO ?? new LocalFileIO();
  const warehouse = options.warehouse ?? (await mkdtemp(join(tmpdir(), 'tidemark-compact-')));
  const catalog = new FileSystemCatalog(warehouse, { fileIO });
  const name = `db.c${++n}`;
  await catalog.createTable(name, spec);
  return openTable(catalog.tableLocation(name), { fileIO });
}

function canonical(v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `0x${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = canonical(x);
    return out;
  }
  return v;
}

/** Every row of the latest snapshot as a canonical string (exact internal values), sorted. */
export async function tableRows(table: Table): Promise<string[]> {
  const read = table.newRead();
  const schema = await read.tableSchema();
  const rows: string[] = [];
  for await (const batch of read.batches()) {
    const readers = schema.fields.map((f, c) => valueReader(batch.data.children[c]!, f.type));
    for (let r = 0; r < batch.numRows; r++) rows.push(JSON.stringify(readers.map((read) => canonical(read(r)))));
  }
  return rows.sort();
}

/** SHA-256 over the sorted canonical rows. */
export async function checksum(table: Table): Promise<{ rows: number; sha: string }> {
  const rows = await tableRows(table);
  const h = createHash('sha256');
  for (const r of rows) h.update(r).update('\n');
  return { rows: rows.length, sha: h.digest('hex') };
}

/** Live data files of the latest snapshot, keyed `partition/bucket/name`. */
export async function liveFiles(table: Table): Promise<string[]> {
  const plan = await table.newRead().plan();
  return plan
    .files()
    .map((f) => `${f.partitionPath}bucket-${f.bucket}/${f.fileName}`)
    .sort();
}

/** Number of data manifests (base + delta) of the latest snapshot. */
export async function manifestCount(table: Table): Promise<number> {
  const latest = await table.snapshotManager.latest();
  return latest === null ? 0 : (await dataManifests(table.fileIO, table.paths, latest)).length;
}

/** Names of every `.parquet` file under the table directory. */
export async function parquetFilesOnDisk(table: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const st of table.fileIO.list(table.location))
    if (st.path.endsWith('.parquet')) out.push(st.path.slice(st.path.lastIndexOf('/') + 1));
  return out.sort();
}

/** Names of the data files live in any snapshot of the table. */
export async function filesOfAllSnapshots(table: Table): Promise<Set<string>> {
  const names = new Set<string>();
  const ids = await table.snapshotManager.sortedIds();
  for (const id of ids) {
    const s = await table.snapshotManager.snapshot(id);
    for (const e of (await liveEntries(table.fileIO, table.paths, s)).values()) names.add(e.file.fileName);
  }
  return names;
}

/**
 * A FileIO that runs `hook` once, right before the first snapshot create made through it: the
 * compaction then loses the race to whatever the hook commits.
 */
export function hookedFileIO(io: FileIO, hook: () => Promise<void>): FileIO {
  let fired = false;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'createIfAbsent') {
        return async (path: string, data: Uint8Array | string) => {
          if (!fired && path.includes('/snapshot/snapshot-')) {
            fired = true;
            await hook();
          }
          return (target.createIfAbsent as (p: string, d: Uint8Array | string) => Promise<unknown>)(path, data);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A copy of every file of `table` under `location` (same file names, so the plan's order is the same). */
export async function copyOf(table: Table, location: string): Promise<Table> {
  for await (const st of table.fileIO.list(table.location)) {
    await table.fileIO.write(`${location}${st.path.slice(table.location.length)}`, await table.fileIO.read(st.path));
  }
  return openTable(location, { fileIO: table.fileIO });
}

/** The latest snapshot's planned data files: their metas and paths, in plan order. */
export async function liveFileMetas(table: Table): Promise<{ meta: DataFileMeta; path: string }[]> {
  return (await table.newRead().plan()).splits.flatMap((s) => s.files.map((f) => ({ meta: f.meta, path: f.path })));
}
