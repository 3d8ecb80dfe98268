/**
 * ORC data files (tables written by Paimon before 1.0, where ORC was the default, or with
 * `file.format = orc`): read with `@tidemark/orc` over ranged reads of a {@link FileIO}, so only the
 * tail and the streams of the projected columns are fetched. Writing ORC is not supported.
 */
import type * as arrow from 'apache-arrow';
import { CorruptOrcFileError, OrcError, OrcReader, UnsupportedOrcFeatureError, type OrcPredicate, type OrcSource } from '@tidemark/orc';
import type { FileIO } from '@tidemark/storage';

import { CorruptFileError, FormatError, SchemaError } from './errors.js';

/** Options of {@link readOrcFile}: the same meaning as for Parquet files. */
export interface OrcFileReadOptions {
  /** Top-level physical column names to read; all columns when absent. */
  readonly columns?: readonly string[];
  /** Rows per yielded batch; default one batch per stripe. */
  readonly batchSize?: number;
  /** Object size if already known (`_FILE_SIZE`), saving a `stat`; the file must have exactly this size. */
  readonly fileSize?: number;
  /** Row count the file must hold (`_ROW_COUNT`), checked against its footer. */
  readonly rowCount?: number;
  /** Stripes and row groups whose statistics prove no row matches are skipped. */
  readonly predicate?: OrcPredicate;
}

/** An {@link OrcSource} over ranged reads of one file of a FileIO. */
export function fileIOSource(io: FileIO, path: string, size: number): OrcSource {
  return {
    byteLength: size,
    read: async (offset, length) => {
      const bytes = await io.readRange(path, offset, length);
      if (bytes.length !== length) {
        throw new CorruptFileError(path, `read ${bytes.length} bytes at offset ${offset}, expected ${length} (truncated file?)`);
      }
      return bytes;
    },
  };
}

/** Maps the ORC package's errors to this package's (a damaged file is a {@link CorruptFileError}). */
export function orcError(path: string, err: unknown): unknown {
  if (err instanceof CorruptOrcFileError) return new CorruptFileError(path, err.message.slice(err.path.length + 2), { cause: err });
  if (err instanceof UnsupportedOrcFeatureError) return new SchemaError(err.message, { cause: err });
  if (err instanceof OrcError) return new FormatError(err.message, { cause: err });
  return err;
}

/** Opens an ORC file of a FileIO (tail read and decoded). */
export async function openOrcFile(io: FileIO, path: string, fileSize?: number): Promise<OrcReader> {
  const size = fileSize ?? (await io.stat(path)).size;
  try {
    return await OrcReader.open(fileIOSource(io, path, size), path);
  } catch (err) {
    // A tail that does not decode, or a ranged read past the end, usually means the object is not
    // the one the manifest recorded: say so by size when the sizes differ.
    if (fileSize !== undefined) {
      const actual = await io.stat(path).then(
        (s) => s.size,
        () => null,
      );
      if (actual !== fileSize) {
        throw new CorruptFileError(
          path,
          `the file is ${actual ?? 'unreadable'} bytes, but its manifest entry records ${fileSize} (truncated or replaced?)`,
          {
            cause: err,
          },
        );
      }
    }
    throw orcError(path, err);
  }
}

/**
 * Streams the record batches of an ORC data file with the ORC reader's Arrow types (apply
 * `conformToPaimonTypes` to get the shared Paimon mapping). Fields carry the ORC type attributes as
 * metadata, among them `paimon.id`, the Paimon field id Java writes.
 *
 * @throws CorruptFileError when the bytes are not a readable ORC file or disagree with `rowCount`;
 *   FormatError when a requested column does not exist; SchemaError for an ORC feature not supported (LZO).
 */
export async function* readOrcFile(io: FileIO, path: string, options: OrcFileReadOptions = {}): AsyncGenerator<arrow.RecordBatch> {
  const reader = await openOrcFile(io, path, options.fileSize);
  if (options.rowCount !== undefined && reader.numberOfRows !== options.rowCount) {
    throw new CorruptFileError(
      path,
      `the file's footer holds ${reader.numberOfRows} rows, but its manifest entry records ${options.rowCount}`,
    );
  }
  try {
    yield* reader.readBatches({
      ...(options.columns ? { columns: options.columns } : {}),
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
      ...(options.predicate ? { predicate: options.predicate } : {}),
    });
  } catch (err) {
    throw orcError(path, err);
  }
}
