/**
 * Streaming Parquet writer: Arrow record batches in, the bytes of one Parquet file out, one row
 * group at a time, so a result of any size is written with memory bounded by a row group (the
 * whole-file writer, `writeParquetFile`, holds the file in memory; it suits data files, which are
 * rolled at `target-file-size`, not exports).
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';

import { FormatError } from './errors.js';
import { encodeParquetIpc, parquetWriterProperties, prepareParquetInput, type ParquetWriteOptions } from './parquet-writer.js';

/** Options of {@link encodeParquetStream}. */
export interface ParquetStreamOptions extends ParquetWriteOptions {
  /**
   * Rows gathered into one row group before it is encoded (default 131,072). Small input batches
   * (one per data file of a table) are merged up to this size, so the output does not get a tiny
   * row group per batch.
   */
  readonly rowGroupRows?: number;
}

const DEFAULT_ROW_GROUP_ROWS = 131_072;

/**
 * Encodes `batches` (all with `schema`'s fields) as one Parquet file and yields its bytes in
 * order; concatenated they are the file. The schema's field metadata (`PARQUET:field_id`) and
 * types are kept as in {@link writeParquetFile}. With no rows at all, yields a valid file holding
 * only the schema.
 *
 * @throws FormatError for bad options or a batch whose schema does not match.
 */
export async function* encodeParquetStream(
  batches: AsyncIterable<arrow.RecordBatch> | Iterable<arrow.RecordBatch>,
  schema: arrow.Schema,
  options: ParquetStreamOptions = {},
): AsyncGenerator<Uint8Array> {
  const groupRows = options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  if (!Number.isInteger(groupRows) || groupRows <= 0) throw new FormatError(`rowGroupRows must be a positive integer, got ${groupRows}`);
  const source = groups(batches, groupRows)[Symbol.asyncIterator]();
  const first = await source.next();
  if (first.done) {
    const { ipc, settings } = prepareParquetInput(new arrow.Table(schema), options);
    yield encodeParquetIpc(ipc, settings);
    return;
  }
  const settings = prepareParquetInput(new arrow.Table(schema), options).settings;
  // parquet-rs emits bytes only when a row group is full: the group size bounds what it buffers.
  const properties = parquetWriterProperties(settings, groupRows);
  let pending: arrow.RecordBatch[] | undefined = first.value;
  const input = new ReadableStream<pw.RecordBatch>({
    async pull(controller) {
      const group = pending ?? (await source.next()).value;
      pending = undefined;
      if (group === undefined) {
        controller.close();
        return;
      }
      // One IPC hand-off per group rather than per (possibly tiny) input batch.
      const table = pw.Table.fromIPCStream(prepareParquetInput(group, options).ipc);
      for (const rb of table.recordBatches()) controller.enqueue(rb);
    },
    async cancel() {
      await source.return?.(undefined);
    },
  });
  const output = await pw.transformParquetStream(input, properties);
  const reader = (output as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** Batches gathered into groups of at least `rows` rows (the last may be smaller); empty batches are dropped. */
async function* groups(
  batches: AsyncIterable<arrow.RecordBatch> | Iterable<arrow.RecordBatch>,
  rows: number,
): AsyncGenerator<arrow.RecordBatch[]> {
  let group: arrow.RecordBatch[] = [];
  let count = 0;
  for await (const batch of batches) {
    if (batch.numRows === 0) continue;
    group.push(batch);
    count += batch.numRows;
    if (count >= rows) {
      yield group;
      group = [];
      count = 0;
    }
  }
  if (group.length > 0) yield group;
}
