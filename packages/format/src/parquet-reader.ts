/**
 * Parquet data-file reader: parquet-wasm's async `ParquetFile` over ranged reads of a
 * {@link FileIO}, handed to apache-arrow JS through the IPC stream format.
 *
 * The async API is used even for local files because the synchronous `readParquet` of
 * parquet-wasm 0.8 ignores the column projection and copies the whole file into wasm memory.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import type { FileIO } from '@tidemark/storage';

import { castData } from './arrow-cast.js';
import { toArrowField } from './arrow-types.js';
import { CorruptFileError, FormatError } from './errors.js';
import { RangeBlob } from './range-blob.js';
import type { DataField } from './types.js';

/**
 * Bytes read from the end of a data file up front: the footer (and all of a small file) in one
 * read instead of separate reads of its length, its metadata and each column chunk.
 */
const TAIL_PREFETCH_BYTES = 64 * 1024;

/** Options of the Parquet readers: columns, row groups and batch size. */
export interface ParquetReadOptions {
  /** Top-level physical column names to read (file order is kept); all columns when absent. */
  readonly columns?: readonly string[];
  /** Rows per yielded batch; defaults to the row count of each row group (one batch per group). */
  readonly batchSize?: number;
  /** Only these row groups (0-based); all when absent. */
  readonly rowGroups?: readonly number[];
  /** Object size if already known (e.g. `_FILE_SIZE` from the manifest), saving one `stat`. */
  readonly fileSize?: number;
}

/**
 * Streams the record batches of a Parquet file with the file's physical Arrow types (apply
 * {@link conformToPaimonTypes} to get the shared Paimon mapping). Reads the footer and only the
 * column chunks of the projected columns; memory is bounded by one row group.
 *
 * @throws CorruptFileError when the bytes are not a readable Parquet file (truncated, bad footer,
 *   undecodable page); FormatError when a requested column or row group does not exist.
 */
export async function* readParquetFile(
  io: FileIO,
  path: string,
  options: ParquetReadOptions = {},
): AsyncGenerator<arrow.RecordBatch> {
  const blob = await RangeBlob.open(io, path, options.fileSize, TAIL_PREFETCH_BYTES);
  let file: pw.ParquetFile;
  try {
    file = await pw.ParquetFile.fromFile(blob as unknown as Blob);
  } catch (err) {
    throw corrupt(path, 'cannot read Parquet footer', err);
  }
  try {
    const meta = file.metadata();
    const groupCount = meta.numRowGroups();
    const groupRows = meta.rowGroups().map((g) => g.numRows());
    meta.free();
    const groups = options.rowGroups ?? [...Array(groupCount).keys()];
    for (const group of groups) {
      const rows = groupRows[group];
      if (rows === undefined) {
        throw new FormatError(`${path}: row group ${group} does not exist (file has ${groupCount})`);
      }
      if (rows === 0) continue;
      let ipc: Uint8Array;
      try {
        const table = await file.read({
          rowGroups: [group],
          batchSize: options.batchSize ?? rows,
          ...(options.columns ? { columns: [...options.columns] } : {}),
        });
        ipc = table.intoIPCStream();
      } catch (err) {
        throw corrupt(path, `cannot decode row group ${group}`, err);
      }
      for (const batch of arrow.tableFromIPC(ipc).batches) yield batch;
    }
  } finally {
    file.free();
  }
}

/**
 * Re-types a batch read from a data file to the shared Paimon → Arrow mapping, using the Paimon
 * fields the file was written with (its `_SCHEMA_ID` schema, or `keyValueFileFields(...)` for
 * primary-key files). Columns are matched by physical name; every field gets `PARQUET:field_id`
 * and Paimon nullability. Buffers are shared with the input where the representation is equal.
 */
export function conformToPaimonTypes(batch: arrow.RecordBatch, fileFields: readonly DataField[]): arrow.RecordBatch {
  const byName = arrowFieldsByName(fileFields);
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  batch.schema.fields.forEach((physical, i) => {
    const target = byName.get(physical.name);
    if (!target) {
      throw new FormatError(`column '${physical.name}' of the data file is not a field of its schema`);
    }
    fields.push(target);
    children.push(castData(batch.data.children[i]!, target.type, physical.name));
  });
  const schema = new arrow.Schema(fields);
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: batch.numRows, nullCount: 0, children });
  return new arrow.RecordBatch(schema, data);
}

/** Arrow fields of a file's Paimon fields by name; cached per fields array (callers reuse it for every batch). */
const arrowFieldCache = new WeakMap<readonly DataField[], Map<string, arrow.Field>>();

function arrowFieldsByName(fileFields: readonly DataField[]): Map<string, arrow.Field> {
  let byName = arrowFieldCache.get(fileFields);
  if (!byName) {
    byName = new Map(fileFields.map((f) => [f.name, toArrowField(f)]));
    arrowFieldCache.set(fileFields, byName);
  }
  return byName;
}

function corrupt(path: string, what: string, err: unknown): Error {
  const detail = err instanceof Error ? err.message : String(err);
  if (/Column .* not found/i.test(detail)) {
    return new FormatError(`${path}: ${detail} (requested columns must be physical column names of the file)`, {
      cause: err,
    });
  }
  return new CorruptFileError(path, `${what}: ${detail}`, { cause: err });
}
