/**
 * Where the data files named by commit messages live: table-relative paths (for in-flight
 * records) and full locations (for existence checks), from the table's path factory.
 */
import { FileStorePathFactory } from '@tidemark/core';
import type { CommitMessage } from '@tidemark/core';
import type { DataFileMeta, IndexFileMeta, TableSchema } from '@tidemark/format';

/** Resolves data file locations of one table. */
export class DataFileLocator {
  private readonly paths: FileStorePathFactory;

  constructor(
    readonly tableLocation: string,
    schema: TableSchema,
    paths?: FileStorePathFactory,
  ) {
    this.paths = paths ?? new FileStorePathFactory(tableLocation, schema);
  }

  /** `[<data dir>/]<partition dirs>/bucket-<b>/<file>` relative to the table root, or null for external files. */
  relativePath(message: CommitMessage, file: DataFileMeta): string | null {
    if (file.externalPath) return null;
    return this.paths.relativeDataFilePath(message.partition, message.bucket, file.fileName);
  }

  /** `index/<file>` relative to the table root, or null for external index files. */
  relativeIndexPath(file: IndexFileMeta): string | null {
    return file.externalPath ? null : `index/${file.fileName}`;
  }

  /** Full location of an index file. */
  indexLocation(file: IndexFileMeta): string {
    return this.paths.indexFilePath(file.fileName, file.externalPath);
  }

  /** Full location of the file. */
  location(message: CommitMessage, file: DataFileMeta): string {
    return this.paths.dataFilePath(message.partition, message.bucket, file.fileName, file.externalPath);
  }
}
