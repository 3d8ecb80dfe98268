/**
 * Reading a table's schema versions (`schema/schema-<id>`). There is no hint file: the latest
 * schema is the highest id found by listing `schema/` (docs/format.md, "Layout").
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { parseSchema, type TableSchema } from '@tidemark/format';
import { SchemaNotFoundError, TableNotFoundError } from './errors.js';
import { listNumberedFiles } from './snapshot-manager.js';
import { SCHEMA_PREFIX, type TablePaths } from './table-paths.js';

/** Reads and caches schema versions. Schema files are immutable, so cached entries never go stale. */
export class SchemaManager {
  private readonly cache = new Map<number, Promise<TableSchema>>();

  constructor(
    readonly fileIO: FileIO,
    readonly paths: TablePaths,
  ) {}

  /** All schema ids in ascending order. */
  async listIds(): Promise<number[]> {
    const ids: number[] = [];
    for await (const id of listNumberedFiles(this.fileIO, this.paths.schemaDir, SCHEMA_PREFIX)) ids.push(id);
    return ids.sort((a, b) => a - b);
  }

  /** Id of the newest schema, or null when `schema/` holds no schema file (not a table). */
  async latestId(): Promise<number | null> {
    let max: number | null = null;
    for await (const id of listNumberedFiles(this.fileIO, this.paths.schemaDir, SCHEMA_PREFIX)) {
      if (max === null || id > max) max = id;
    }
    return max;
  }

  /**
   * The newest schema.
   *
   * @throws TableNotFoundError when the table root has no schema files.
   */
  async latest(): Promise<TableSchema> {
    const id = await this.latestId();
    if (id === null) throw new TableNotFoundError(this.paths.root, `no schema files in ${this.paths.schemaDir}`);
    return this.schema(id);
  }

  /**
   * The newest schema, starting from `knownId` (a schema id this process saw): schema ids are
   * contiguous, so when `knownId + 1` does not exist `knownId` is still the newest (one request).
   *
   * @throws TableNotFoundError when the table root has no schema files.
   */
  async latestFrom(knownId: number): Promise<TableSchema> {
    if (await this.fileIO.exists(this.paths.schemaPath(knownId + 1))) return this.latest();
    return this.schema(knownId);
  }

  /**
   * Schema `id` (cached).
   *
   * @throws SchemaNotFoundError naming the missing file.
   */
  schema(id: number): Promise<TableSchema> {
    let p = this.cache.get(id);
    if (!p) {
      p = this.load(id);
      this.cache.set(id, p);
      // Do not cache failures: a later call may succeed (transient I/O error).
      p.catch(() => this.cache.delete(id));
    }
    return p;
  }

  private async load(id: number): Promise<TableSchema> {
    const path = this.paths.schemaPath(id);
    let bytes: Uint8Array;
    try {
      bytes = await this.fileIO.read(path);
    } catch (e) {
      if (e instanceof NotFoundError) throw new SchemaNotFoundError(id, path, { cause: e });
      throw e;
    }
    return parseSchema(bytes, path);
  }
}
