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
 * Refuses a commit to a table whose manifests tidemark cannot write: only Avro manifests are written,
 * and writing another format than the table asks for would silently change it (ORC manifests are read).
 *
 * @throws NotSupportedError naming `manifest.format`.
 */
export function checkWritableManifestFormat(options: Pick<CoreOptions, 'manifestFormat'>): void {
  if (options.manifestFormat !== 'avro') {
    throw new NotSupportedError(
      `table option 'manifest.format' = '${options.manifestFormat}': tidemark reads such manifests but writes only avro ones; ` +
        `set it to avro before writing (tidemark alter <table> set-option manifest.format=avro); existing manifests stay readable`,
    );
  }
}

/**
 * The Parquet codec of `file.compression`, after checking that the table's data files and manifests
 * can be written (called by every data file writer before its first file).
 *
 * @throws NotSupportedError for a non-Parquet `file.format`, a non-Avro `manifest.format` or a
 *   codec tidemark cannot write.
 */
export function parquetCompressionOf(options: Pick<CoreOptions, 'fileFormat' | 'fileCompression' | 'manifestFormat'>): ParquetCompression {
  if (options.fileFormat !== 'parquet') {
    throw new NotSupportedError(
      `table option 'file.format' = '${options.fileFormat}': tidemark reads ${options.fileFormat} data files but writes only parquet ones; ` +
        `set it to parquet before writing (tidemark alter <table> set-option file.format=parquet); existing ${options.fileFormat} files stay readable`,
    );
  }
  checkWritableManifestFormat(options);
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
