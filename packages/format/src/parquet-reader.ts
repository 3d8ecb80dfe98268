/**
 * Parquet data-file reader: parquet-wasm's async `ParquetFile` over ranged reads of a
 * {@link FileIO}, handed to apache-arrow JS through the IPC stream format.
 *
 * The async API is used even for local files because the synchronous `readParquet` of
 * parquet-wasm 0.8 ignores the column projection and copies the whole file into wasm memory.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { InvalidRangeError, type FileIO } from '@tidemark/storage';

import { castData } from './arrow-cast.js';
import { toArrowField } from './arrow-types.js';
import { CorruptFileError, FormatError } from './errors.js';
import { RangeBlob } from './range-blob.js';
import { guardWasmRead } from './wasm-trap-guard.js';
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
  /**
   * Object size if already known (e.g. `_FILE_SIZE` from the manifest), saving one `stat`. The
   * file is then checked to have exactly this size: a truncated or extended file is refused as
   * corrupt before its bytes reach the decoder.
   */
  readonly fileSize?: number;
  /** Row count the file must hold (e.g. `_ROW_COUNT` from the manifest); checked against its footer and the decoded rows. */
  readonly rowCount?: number;
}

/**
 * Streams the record batches of a Parquet file with the file's physical Arrow types (apply
 * {@link conformToPaimonTypes} to get the shared Paimon mapping). Reads the footer and only the
 * column chunks of the projected columns; memory is bounded by one row group.
 *
 * @throws CorruptFileError when the bytes are not a readable Parquet file (truncated, bad footer,
 *   undecodable page); FormatError when a requested column or row group does not exist.
 */
export async function* readParquetFile(io: FileIO, path: string, options: ParquetReadOptions = {}): AsyncGenerator<arrow.RecordBatch> {
  const blob = await openChecked(io, path, options.fileSize);
  let file: pw.ParquetFile;
  try {
    file = await guardWasmRead(path, () => pw.ParquetFile.fromFile(blob as unknown as Blob));
  } catch (err) {
    throw corrupt(path, 'cannot read Parquet footer', err);
  }
  try {
    let groupCount: number;
    let groupRows: number[];
    try {
      const meta = file.metadata();
      groupCount = meta.numRowGroups();
      groupRows = meta.rowGroups().map((g) => g.numRows());
      meta.free();
    } catch (err) {
      throw corrupt(path, 'cannot read Parquet metadata', err);
    }
    if (options.rowCount !== undefined) {
      const total = groupRows.reduce((a, b) => a + b, 0);
      if (total !== options.rowCount) {
        throw new CorruptFileError(path, `the file's footer holds ${total} rows, but its manifest entry records ${options.rowCount}`);
      }
    }
    const groups = options.rowGroups ?? [...Array(groupCount).keys()];
    for (const group of groups) {
      const rows = groupRows[group];
      if (rows === undefined) {
        throw new FormatError(`${path}: row group ${group} does not exist (file has ${groupCount})`);
      }
      if (rows === 0) continue;
      let batches: arrow.RecordBatch[];
      try {
        const table = await guardWasmRead(path, () =>
          file.read({
            rowGroups: [group],
            batchSize: options.batchSize ?? rows,
            ...(options.columns ? { columns: [...options.columns] } : {}),
          }),
        );
        batches = arrow.tableFromIPC(table.intoIPCStream()).batches;
      } catch (err) {
        throw corrupt(path, `cannot decode row group ${group}`, err);
      }
      const decoded = batches.reduce((a, b) => a + b.numRows, 0);
      if (decoded !== rows)
        throw new CorruptFileError(path, `row group ${group} decoded to ${decoded} rows, but its footer records ${rows}`);
      for (const batch of batches) yield batch;
    }
  } finally {
    // After a failed or trapped read the handle may still be borrowed by a future that will never
    // finish; freeing it then throws, and that must not replace the error that names the file.
    try {
      file.free();
    } catch {
      /* leaked, not reused */
    }
  }
}

/**
 * Opens the file for parquet-wasm. With a known size, checks that the file really has it (the
 * prefetched tail is complete and ends with the Parquet magic) and reports a mismatch by size.
 */
async function openChecked(io: FileIO, path: string, fileSize: number | undefined): Promise<RangeBlob> {
  let blob: RangeBlob;
  try {
    blob = await RangeBlob.open(io, path, fileSize, TAIL_PREFETCH_BYTES);
  } catch (err) {
    if (fileSize === undefined || !(err instanceof InvalidRangeError)) throw err;
    throw await sizeMismatch(io, path, fileSize, err);
  }
  if (fileSize === undefined) return blob;
  const tail = blob.tail;
  const complete = tail.length === Math.min(fileSize, TAIL_PREFETCH_BYTES);
  const magic =
    tail.length >= 4 &&
    tail[tail.length - 4] === 0x50 &&
    tail[tail.length - 3] === 0x41 &&
    tail[tail.length - 2] === 0x52 &&
    tail[tail.length - 1] === 0x31;
  if (complete && magic) return blob;
  if (!complete) throw await sizeMismatch(io, path, fileSize);
  const actual = (await io.stat(path)).size;
  if (actual !== fileSize) throw await sizeMismatch(io, path, fileSize);
  throw new CorruptFileError(path, 'the file does not end with the Parquet magic bytes');
}

async function sizeMismatch(io: FileIO, path: string, fileSize: number, cause?: unknown): Promise<CorruptFileError> {
  const actual = await io.stat(path).then(
    (s) => `${s.size} bytes`,
    () => 'unreadable',
  );
  return new CorruptFileError(path, `the file is ${actual}, but its manifest entry records ${fileSize} bytes (truncated or replaced?)`, {
    cause,
  });
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
  if (err instanceof CorruptFileError && err.path === path) return err;
  const detail = err instanceof Error ? err.message : String(err);
  if (/Column .* not found/i.test(detail)) {
    return new FormatError(`${path}: ${detail} (requested columns must be physical column names of the file)`, {
      cause: err,
    });
  }
  return new CorruptFileError(path, `${what}: ${detail}`, { cause: err });
}
