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
 * Refuses writing to a table whose data file or manifest format tidemark cannot write: it writes
 * Parquet data files and Avro manifests only, and writing another format than the table asks for
 * would silently change the table (ORC files and manifests are read). Names every such option.
 *
 * @throws NotSupportedError naming `file.format` and/or `manifest.format`.
 */
export function checkWritableFormats(options: Pick<CoreOptions, 'fileFormat' | 'manifestFormat'>): void {
  const wrong: [string, string, string][] = [];
  if (options.fileFormat !== 'parquet') wrong.push(['file.format', options.fileFormat, 'parquet']);
  if (options.manifestFormat !== 'avro') wrong.push(['manifest.format', options.manifestFormat, 'avro']);
  if (wrong.length === 0) return;
  const named = wrong.map(([k, v]) => `'${k}' = '${v}'`).join(' and ');
  const fix = wrong.map(([k, , want]) => `${k}=${want}`).join(' ');
  throw new NotSupportedError(
    `table option${wrong.length > 1 ? 's' : ''} ${named}: tidemark reads such tables but writes only parquet data files and avro manifests; ` +
      `to write, first run tidemark alter <table> set-option ${fix} (existing files and manifests stay readable)`,
  );
}

/**
 * The Parquet codec of `file.compression`, after checking that the table's data files and manifests
 * can be written (called by every data file writer before its first file).
 *
 * @throws NotSupportedError for a non-Parquet `file.format`, a non-Avro `manifest.format` or a
 *   codec tidemark cannot write.
 */
export function parquetCompressionOf(options: Pick<CoreOptions, 'fileFormat' | 'fileCompression' | 'manifestFormat'>): ParquetCompression {
  checkWritableFormats(options);
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
