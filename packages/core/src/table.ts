/**
 * `Table`: one Paimon table opened from its directory (local path, `file://`, `s3://`,
 * `memory://`), with its schema, snapshots, tags and the read API.
 *
 * ```ts
 * const table = await openTable('s3://bucket/wh/db.db/t');
 * for await (const batch of table.newRead({ columns: ['id', 'v'], where: 'id > 10' }).batches()) …
 * const t = await table.newRead({ snapshotId: 3 }).toArrowTable();
 * ```
 */
import type * as arrow from 'apache-arrow';
import { resolveFileIO, type FileIO, type ResolveFileIOOptions } from '@tidemark/storage';
import type { TableSchema } from '@tidemark/format';
import { SchemaManager } from './schema-manager.js';
import { SnapshotManager } from './snapshot-manager.js';
import { TablePaths } from './table-paths.js';
import { TagManager } from './tag-manager.js';
import { IncrementalRead, TableRead, type IncrementalReadOptions, type ReadOptions } from './read/table-read.js';

/** Options of {@link openTable}. */
export interface OpenTableOptions {
  /** Storage to use; by default one is resolved from the location's scheme. */
  readonly fileIO?: FileIO;
  /** Settings for resolving the FileIO (e.g. S3 credentials) when `fileIO` is not given. */
  readonly storage?: ResolveFileIOOptions;
  /** Branch to read (default `main`). */
  readonly branch?: string;
}

/**
 * A Paimon table. Obtain one with {@link openTable} (or `Table.open`). Cheap to hold: it keeps the
 * FileIO, the derived paths, and the schema that was current when it was opened.
 */
export class Table {
  /** Reads schema versions. */
  readonly schemaManager: SchemaManager;
  /** Reads snapshots (latest, by id, by time). */
  readonly snapshotManager: SnapshotManager;
  /** Reads tags. */
  readonly tagManager: TagManager;

  protected constructor(
    /** The table directory as given. */
    readonly location: string,
    readonly fileIO: FileIO,
    readonly paths: TablePaths,
    private readonly currentSchema: TableSchema,
    schemaManager: SchemaManager,
  ) {
    this.schemaManager = schemaManager;
    this.snapshotManager = new SnapshotManager(fileIO, paths);
    this.tagManager = new TagManager(fileIO, paths);
  }

  /**
   * Opens the table at `location` by reading its latest schema.
   *
   * @throws TableNotFoundError when `location` holds no `schema/schema-<n>` file.
   */
  static async open(location: string, options: OpenTableOptions = {}): Promise<Table> {
    const root = location.replace(/\/+$/, '') || location;
    const fileIO = options.fileIO ?? resolveFileIO(root, options.storage ?? {});
    const basePaths = new TablePaths(root, options.branch ? { branch: options.branch } : {});
    const schemaManager = new SchemaManager(fileIO, basePaths);
    const schema = await schemaManager.latest();
    const dir = schema.options['data-file.path-directory'];
    const paths = new TablePaths(root, {
      ...(options.branch ? { branch: options.branch } : {}),
      ...(dir ? { dataFilePathDirectory: dir } : {}),
    });
    return new Table(root, fileIO, paths, schema, dir ? new SchemaManager(fileIO, paths) : schemaManager);
  }

  /** The latest schema as of opening the table (see `schemaManager` for other versions). */
  schema(): TableSchema {
    return this.currentSchema;
  }

  /** Whether the table has a primary key. */
  get isPrimaryKeyTable(): boolean {
    return this.currentSchema.primaryKeys.length > 0;
  }

  /**
   * A batch read of the latest snapshot, or of a snapshot id / timestamp / tag, with optional
   * projection (`columns`), filter (`where`), `limit`, and `partition` / `bucket` restriction.
   * Nothing is read until `plan()`, `batches()` or `toArrowTable()` is called.
   */
  newRead(options: ReadOptions = {}): TableRead {
    return new TableRead(this, options);
  }

  /**
   * The rows added by the snapshots in (`fromSnapshotId`, `toSnapshotId`]; see
   * {@link IncrementalRead} for what this means for primary-key tables.
   */
  newIncrementalRead(options: IncrementalReadOptions): IncrementalRead {
    return new IncrementalRead(this, options);
  }

  /** Releases the FileIO's clients. Call when done with a table opened without a `fileIO`. */
  async close(): Promise<void> {
    await this.fileIO.close();
  }
}

/** Opens the Paimon table at `location` (local path, `file://…`, `s3://bucket/…/db.db/t`). */
export function openTable(location: string, options: OpenTableOptions = {}): Promise<Table> {
  return Table.open(location, options);
}

/**
 * Convenience: opens the table at `location`, reads it with `options` and returns one Arrow Table.
 * The FileIO is closed afterwards unless one was passed in.
 */
export async function readTable(location: string, options: ReadOptions & OpenTableOptions = {}): Promise<arrow.Table> {
  const table = await openTable(location, options);
  try {
    return await table.newRead(options).toArrowTable();
  } finally {
    if (!options.fileIO) await table.close();
  }
}
