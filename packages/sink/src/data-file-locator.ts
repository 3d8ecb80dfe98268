/**
 * Where the data files named by commit messages live: table-relative paths (for in-flight
 * records) and full locations (for existence checks).
 */
import { TablePaths, tableOptions } from '@tidemark/core';
import type { CommitMessage } from '@tidemark/core';
import { deserializeBinaryRow, partitionPath, type DataFileMeta, type DataType, type TableSchema } from '@tidemark/format';

/** Resolves data file locations of one table. */
export class DataFileLocator {
  private readonly paths: TablePaths;
  private readonly partitionTypes: DataType[];
  private readonly dirCache = new Map<string, string>();

  constructor(
    readonly tableLocation: string,
    private readonly schema: TableSchema,
  ) {
    this.paths = new TablePaths(tableLocation);
    this.partitionTypes = schema.partitionKeys.map((k) => schema.fields.find((f) => f.name === k)!.type);
  }

  private partitionDir(partition: Uint8Array): string {
    const key = Buffer.from(partition).toString('hex');
    let dir = this.dirCache.get(key);
    if (dir === undefined) {
      const options = tableOptions(this.schema);
      dir = partitionPath(this.schema.partitionKeys, this.partitionTypes, deserializeBinaryRow(partition, this.partitionTypes), {
        legacyName: options.partitionLegacyName,
        defaultName: options.partitionDefaultName,
      });
      this.dirCache.set(key, dir);
    }
    return dir;
  }

  /** `<partition dirs>/bucket-<b>/<file>` relative to the table root, or null for external files. */
  relativePath(message: CommitMessage, file: DataFileMeta): string | null {
    if (file.externalPath) return null;
    const dir = this.partitionDir(message.partition).replace(/^\/+|\/+$/g, '');
    return `${dir === '' ? '' : `${dir}/`}bucket-${message.bucket}/${file.fileName}`;
  }

  /** Full location of the file. */
  location(message: CommitMessage, file: DataFileMeta): string {
    return this.paths.dataFilePath(this.partitionDir(message.partition), message.bucket, file.fileName, file.externalPath);
  }
}
