/** Data file format settings shared by the append and the key-value writers. */
import type { ParquetCompression } from '@tidemark/format';
import type { CoreOptions } from '../core-options.js';
import { NotSupportedError } from './write-errors.js';

const COMPRESSIONS: Record<string, ParquetCompression> = {
  zstd: 'zstd',
  snappy: 'snappy',
  lz4: 'lz4',
  gzip: 'gzip',
  none: 'none',
  uncompressed: 'none',
};

/**
 * The Parquet codec of `file.compression`.
 *
 * @throws NotSupportedError for a non-Parquet `file.format` or a codec tidemark cannot write.
 */
export function parquetCompressionOf(options: Pick<CoreOptions, 'fileFormat' | 'fileCompression'>): ParquetCompression {
  if (options.fileFormat !== 'parquet') {
    throw new NotSupportedError(`table option 'file.format' = '${options.fileFormat}': only parquet data files can be written`);
  }
  const compression = COMPRESSIONS[options.fileCompression];
  if (!compression) {
    throw new NotSupportedError(
      `table option 'file.compression' = '${options.fileCompression}' is not supported for writing (use zstd, snappy, lz4, gzip or none)`,
    );
  }
  return compression;
}

/** `_CREATION_TIME` as Java stores it: the writer's local wall-clock time read as UTC millis. */
export function creationTimeOf(now: number): number {
  return now - new Date(now).getTimezoneOffset() * 60_000;
}
