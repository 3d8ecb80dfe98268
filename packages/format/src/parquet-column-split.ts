/**
 * One row group encoded on several workers at once, its top-level columns split between them.
 *
 * parquet-wasm encodes a file on one thread. Cutting a file into one row group per worker uses the
 * cores but costs CPU and size (every group restarts the dictionaries: 2 groups of 500,000 rows
 * took 1.21 × the CPU of one group of 1M, measured). Column chunks are independent in Parquet, so
 * here each worker encodes the same rows of some of the columns, and the chunks are stitched into
 * one row group ({@link stitchParquetColumns}): the work of one group, spread over the workers.
 */
import * as arrow from 'apache-arrow';

import { stitchParquetColumns } from './parquet-concat.js';
import type { ParquetWorkerPool } from './parquet-worker-pool.js';
import { parquetEncodeSettings, prepareParquetInput, type ParquetWriteOptions } from './parquet-writer.js';

/**
 * Groups of fewer rows are encoded whole: the stitched file needs one more (tiny) job and a footer
 * rewrite, which a small group does not repay.
 */
export const MIN_COLUMN_SPLIT_ROWS = 16_384;

/**
 * Estimated encode cost of a column (of the rows `data` covers, which may be a slice of bigger
 * buffers): the bytes of its values, variable-length values twice (hashed for the dictionary,
 * then copied into pages), plus the offsets and levels per row.
 */
function encodeCost(data: arrow.Data): number {
  const { type, offset, length } = data;
  const offsets = data.valueOffsets as ArrayLike<number | bigint> | undefined;
  const span = (): number => (offsets && offsets.length > offset + length ? Number(offsets[offset + length]) - Number(offsets[offset]) : 0);
  let cost = length / 8;
  if (data.dictionary) for (const d of data.dictionary.data) cost += encodeCost(d);
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type) || arrow.DataType.isLargeUtf8(type))
    return cost + 4 * length + 2 * span();
  if (arrow.DataType.isBool(type)) return cost + length / 8;
  if (offsets && data.children.length === 1) {
    // A list or map: its child's cost in proportion to the child rows these rows reach.
    const child = data.children[0]!;
    return cost + 4 * length + (child.length > 0 ? (encodeCost(child) * span()) / child.length : 0);
  }
  if (data.children.length > 0) return data.children.reduce((n, c) => n + encodeCost(c), cost);
  const values = data.values as { BYTES_PER_ELEMENT?: number } | undefined;
  return cost + length * (data.stride || 1) * (values?.BYTES_PER_ELEMENT ?? 1);
}

/**
 * The top-level fields of `batches` split into `workers` sets of about equal estimated encode cost
 * (largest first, each to the set with the least so far; every set in schema order), or null when
 * a split does not pay: fewer than two workers or fields, or fewer than {@link MIN_COLUMN_SPLIT_ROWS} rows.
 */
export function planColumnSplit(batches: readonly arrow.RecordBatch[], workers: number): number[][] | null {
  const first = batches[0];
  if (!first || workers < 2) return null;
  const fields = first.schema.fields.length;
  const rows = batches.reduce((n, b) => n + b.numRows, 0);
  if (fields < 2 || rows < MIN_COLUMN_SPLIT_ROWS) return null;
  const costs = first.schema.fields.map((_, i) => batches.reduce((n, b) => n + encodeCost(b.data.children[i]!), 0));
  const sets: { fields: number[]; cost: number }[] = Array.from({ length: Math.min(workers, fields) }, () => ({ fields: [], cost: 0 }));
  const order = costs.map((c, i) => ({ c, i })).sort((a, b) => b.c - a.c || a.i - b.i);
  for (const { c, i } of order) {
    const lightest = sets.reduce((a, b) => (b.cost < a.cost ? b : a));
    lightest.fields.push(i);
    lightest.cost += c;
  }
  return sets.map((s) => s.fields.sort((a, b) => a - b));
}

/** Template files (the whole schema, no rows) by schema and writer settings: one encode per schema. */
const templates = new WeakMap<arrow.Schema, Map<string, Promise<Uint8Array>>>();

/**
 * Encodes `batches` as a Parquet file of ONE row group whose columns are encoded on the pool's
 * workers at once (split by {@link planColumnSplit}) and stitched, or null when the split does not
 * pay or the pool has fewer than two workers (the caller encodes the group whole then). The file
 * holds the rows and footer metadata a one-group encode would (same schema, `ARROW:schema`,
 * statistics, dictionaries and pages per column), laid out column by column.
 *
 * @throws ParquetEncodeError (through the promise) when a worker fails; FormatError when the parts
 *   cannot be stitched.
 */
export function encodeColumnSplit(
  pool: ParquetWorkerPool,
  batches: readonly arrow.RecordBatch[],
  options: ParquetWriteOptions = {},
): Promise<Uint8Array> | null {
  const plan = planColumnSplit(batches, pool.size);
  if (plan === null) return null;
  const rows = batches.reduce((n, b) => n + b.numRows, 0);
  // One row group per part, whatever the configured size: the parts must line up row for row.
  const writeOptions: ParquetWriteOptions = { ...options, rowGroupSize: Math.max(rows, 1) };
  const settings = parquetEncodeSettings(writeOptions);
  const schema = batches[0]!.schema;
  // Queued first: a job of a few milliseconds that a worker finishes before its part.
  const template = templateFile(pool, schema, options);
  const table = new arrow.Table(batches as arrow.RecordBatch[]);
  const parts = plan.map((fields) => {
    const { ipc } = prepareParquetInput(table.selectAt(fields), writeOptions);
    const bytes = pool.encodeIpc(ipc, settings);
    bytes.catch(() => undefined); // awaited below, together
    return bytes.then((b) => ({ bytes: b, fields }));
  });
  return Promise.all([template, Promise.all(parts)]).then(([t, p]) => stitchParquetColumns(t, p));
}

function templateFile(pool: ParquetWorkerPool, schema: arrow.Schema, options: ParquetWriteOptions): Promise<Uint8Array> {
  const settings = parquetEncodeSettings(options);
  const key = `${settings.codec}/${settings.createdBy}/${(settings.plainColumns ?? []).join(',')}`;
  let bySettings = templates.get(schema);
  if (!bySettings) templates.set(schema, (bySettings = new Map()));
  let file = bySettings.get(key);
  if (!file) {
    const { ipc } = prepareParquetInput(new arrow.Table(schema), options);
    file = pool.encodeIpc(ipc, settings);
    bySettings.set(key, file);
    // A failed template is not kept: the next group asks again.
    file.catch(() => bySettings.delete(key));
  }
  return file;
}
