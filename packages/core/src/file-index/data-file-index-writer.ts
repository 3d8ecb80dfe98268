/**
 * Builds the file index of one data file as it is written (Java's `DataFileIndexWriter`): every
 * row's value of each indexed column goes into its bloom filter (nulls are not indexed; the
 * retraction rows of a primary-key file are, as in Java, so that a lookup of a deleted key still
 * reads the file holding the delete). On close, an index of at most
 * `file-index.in-manifest-threshold` bytes is embedded in the file's manifest entry; a larger one
 * is written next to the data file as `<data file name>.index` and listed in `_EXTRA_FILES`.
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import { BLOOM_FILTER_INDEX, BloomFilterIndexWriter, writeFileIndex, type DataFileMeta } from '@tidemark/format';
import { valueReader } from '../read/arrow-values.js';
import type { BloomFilterColumn, FileIndexSettings } from './file-index-options.js';

/** Suffix Paimon gives a data file's index sidecar. */
export const FILE_INDEX_SUFFIX = '.index';

/** The fields of a data file's manifest entry that carry its index. */
export type DataFileIndexFields = Pick<DataFileMeta, 'embeddedIndex' | 'extraFiles'>;

/** The manifest fields of a data file without an index. */
export const NO_FILE_INDEX: DataFileIndexFields = { embeddedIndex: null, extraFiles: [] };

/** Collects one data file's indexed values; see the module comment. */
export class DataFileIndexWriter {
  private readonly filters: Array<{ readonly column: BloomFilterColumn; readonly writer: BloomFilterIndexWriter }>;

  constructor(private readonly settings: FileIndexSettings) {
    this.filters = settings.bloomFilters.map((column) => ({
      column,
      writer: new BloomFilterIndexWriter(column.field.type, column.items, column.fpp),
    }));
  }

  /** Adds the rows of `columns` (the table's columns in schema order, `rows` long). */
  add(columns: readonly arrow.Data[], rows: number): void {
    for (const { column, writer } of this.filters) {
      const data = columns[column.position]!;
      if (hashesBytes(column) && (arrow.DataType.isUtf8(data.type) || arrow.DataType.isBinary(data.type))) {
        // Strings and bytes hash their bytes: straight from the Arrow buffers, nothing decoded.
        const offsets = data.valueOffsets;
        const values = data.values as Uint8Array;
        for (let i = 0; i < rows; i++) if (data.getValid(i)) writer.addBytes(values.subarray(offsets[i]!, offsets[i + 1]!));
        continue;
      }
      const read = valueReader(data, column.field.type);
      for (let i = 0; i < rows; i++) writer.add(read(i));
    }
  }

  /** Adds the rows of a batch whose columns are the table's columns in schema order. */
  addBatch(batch: arrow.RecordBatch): void {
    this.add(batch.data.children, batch.numRows);
  }

  /** The serialized container (Paimon's file-index format, version 1). */
  serialize(): Uint8Array {
    return writeFileIndex(
      new Map(this.filters.map(({ column, writer }) => [column.field.name, new Map([[BLOOM_FILTER_INDEX, writer.serialize()]])])),
    );
  }

  /**
   * Finishes the index of the data file at `dataFilePath`: embeds it, or writes the sidecar (before
   * the file is committed, so a reader never sees a file whose sidecar is missing).
   */
  async finish(fileIO: FileIO, dataFilePath: string): Promise<DataFileIndexFields> {
    const bytes = this.serialize();
    if (bytes.length <= this.settings.inManifestThreshold) return { embeddedIndex: bytes, extraFiles: [] };
    const path = dataFilePath + FILE_INDEX_SUFFIX;
    await fileIO.write(path, bytes);
    return { embeddedIndex: null, extraFiles: [path.slice(path.lastIndexOf('/') + 1)] };
  }
}

function hashesBytes(column: BloomFilterColumn): boolean {
  const root = column.field.type.root;
  return root === 'CHAR' || root === 'VARCHAR' || root === 'BINARY' || root === 'VARBINARY';
}

/** The path of a data file and of its extra files (index sidecars), which live in its directory. */
export function withExtraFiles(dataFilePath: string, file: Pick<DataFileMeta, 'extraFiles'>): string[] {
  if (file.extraFiles.length === 0) return [dataFilePath];
  const dir = dataFilePath.slice(0, dataFilePath.lastIndexOf('/') + 1);
  return [dataFilePath, ...file.extraFiles.map((x) => dir + x)];
}
