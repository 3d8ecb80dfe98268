/**
 * Deterministic input of the write and commit benchmarks (libraries.md §2 shape), produced two
 * ways that yield the same values: as apache-arrow RecordBatches in JS, and as a DuckDB SELECT
 * (so DuckDB's `COPY … TO` writes the same rows without a JS → DuckDB transfer in the timing).
 *
 * Row i (0 ≤ i < N):
 * - id     BIGINT       = i
 * - name   STRING       = 'name-' + ((i · 87654321) mod 10^11) as 11 digits: 16 chars, unique for
 *                        i < 10^11 (87654321 is coprime with 10^11), not sorted
 * - amount DOUBLE       = ((i · 7919) mod 10^6) / 100
 * - ts     TIMESTAMP(3) = 2024-01-01T00:00:00Z + i seconds
 * - dt     STRING       = '2024-01-DD' with DD = floor(i · 30 / N) + 1: 30 values in sorted runs
 *
 * Large inputs are cached as an Arrow IPC file under benchmarks/work/ so every child process loads
 * the same bytes (generation is not part of any measurement).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import * as arrow from 'apache-arrow';
import { arrowSchemaFor } from './arrow-schema.mjs';

export const BASE_MS = Date.UTC(2024, 0, 1);
const NAME_MULT = 87654321;
const NAME_MOD = 100_000_000_000;

/** Paimon columns of the benchmark table (for `FileSystemCatalog.createTable`). */
export const TABLE_FIELDS = [
  { name: 'id', type: 'BIGINT' },
  { name: 'name', type: 'STRING' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'ts', type: 'TIMESTAMP(3)' },
  { name: 'dt', type: 'STRING' },
];

const SCHEMA = arrowSchemaFor(TABLE_FIELDS);

/** Utf8 Data from ASCII strings of known total length (no per-string byteLength pass needed). */
function asciiUtf8(strings) {
  const n = strings.length;
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += strings[i].length;
    offsets[i + 1] = total;
  }
  const buf = Buffer.allocUnsafe(total);
  for (let i = 0; i < n; i++) buf.write(strings[i], offsets[i], 'latin1');
  return arrow.makeData({
    type: new arrow.Utf8(),
    length: n,
    nullCount: 0,
    valueOffsets: offsets,
    data: new Uint8Array(buf.buffer, buf.byteOffset, total),
  });
}

/**
 * Rows [start, start + count) of an N-row data set as one RecordBatch (every buffer freshly
 * allocated: apache-arrow 21 corrupts IPC streams whose vectors share a typed array).
 */
export function makeBatch(start, count, totalRows) {
  const ids = new BigInt64Array(count);
  const amounts = new Float64Array(count);
  const ts = new BigInt64Array(count);
  const names = new Array(count);
  const dts = new Array(count);
  for (let k = 0; k < count; k++) {
    const i = start + k;
    ids[k] = BigInt(i);
    names[k] = 'name-' + String((i * NAME_MULT) % NAME_MOD).padStart(11, '0');
    amounts[k] = ((i * 7919) % 1_000_000) / 100;
    ts[k] = BigInt(BASE_MS + i * 1000);
    dts[k] = '2024-01-' + String(Math.floor((i * 30) / totalRows) + 1).padStart(2, '0');
  }
  const children = [
    arrow.makeData({ type: SCHEMA.fields[0].type, length: count, nullCount: 0, data: ids }),
    asciiUtf8(names),
    arrow.makeData({ type: SCHEMA.fields[2].type, length: count, nullCount: 0, data: amounts }),
    arrow.makeData({ type: SCHEMA.fields[3].type, length: count, nullCount: 0, data: ts }),
    asciiUtf8(dts),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: count, nullCount: 0, children });
  return new arrow.RecordBatch(SCHEMA, struct);
}

/** All N rows as an Arrow Table of `batchRows`-row batches. */
export function makeTable(totalRows, batchRows = 100_000) {
  const batches = [];
  for (let s = 0; s < totalRows; s += batchRows) batches.push(makeBatch(s, Math.min(batchRows, totalRows - s), totalRows));
  return new arrow.Table(SCHEMA, batches);
}

/** The same N rows as a DuckDB SELECT (columns in the same order and with the same values). */
export function duckdbSelect(totalRows) {
  return `SELECT
      i AS id,
      'name-' || lpad(((i * ${NAME_MULT}) % ${NAME_MOD})::VARCHAR, 11, '0') AS name,
      ((i * 7919) % 1000000)::DOUBLE / 100.0 AS amount,
      epoch_ms(${BASE_MS}::BIGINT + i * 1000)::TIMESTAMP_MS AS ts,
      '2024-01-' || lpad(((i * 30) // ${totalRows} + 1)::VARCHAR, 2, '0') AS dt
    FROM range(${totalRows}) r(i)`;
}

/**
 * Loads the cached Arrow IPC file of `path` (generating it first when missing). The returned
 * Table's buffers are views into one file buffer.
 */
export async function loadOrMakeTable(path, totalRows, batchRows = 100_000) {
  if (!existsSync(path)) {
    const table = makeTable(totalRows, batchRows);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, arrow.tableToIPC(table, 'file'));
    await rename(tmp, path);
  }
  const table = arrow.tableFromIPC(await readFile(path));
  if (table.numRows !== totalRows) throw new Error(`${path} holds ${table.numRows} rows, expected ${totalRows}; delete it to regenerate`);
  return table;
}

/** In-memory Arrow size of a table (sum of its buffers' byte lengths). */
export function arrowBytes(table) {
  let total = 0;
  const visit = (data) => {
    for (const b of [data.valueOffsets, data.values, data.nullBitmap, data.typeIds]) if (b) total += b.byteLength;
    for (const c of data.children) visit(c);
  };
  for (const batch of table.batches) for (const c of batch.data.children) visit(c);
  return total;
}
