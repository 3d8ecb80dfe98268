/**
 * Filesystem catalog: a warehouse location holding databases (`<db>.db/`) holding tables
 * (`<db>.db/<table>/`), as Java Paimon's `FileSystemCatalog` lays them out.
 *
 * Object stores have no directories, so the catalog records no markers: on S3 / memory a database
 * exists as soon as something is stored under `<db>.db/`, `createDatabase` only validates the name,
 * and listings derive database and table names from object keys. On local disk databases are real
 * directories (so Java Paimon sees an empty database too).
 */
import { promises as fs } from 'node:fs';
import { joinPath, parseLocation, resolveFileIO, type FileIO, type S3Options } from '@tidemark/storage';
import { parseSchema, serializeSchema, type TableSchema } from '@tidemark/format';
import { TableNotFoundError, TidemarkUserError } from './errors.js';
import { SchemaManager } from './schema-manager.js';
import { buildInitialSchema, type TableSpec } from './schema-builder.js';
import { coreOptions, warnUnknownOptions, type OptionsLogger } from './core-options.js';
import { parseNumberedName } from './snapshot-manager.js';
import { SCHEMA_PREFIX } from './table-paths.js';
import { metadataPaths } from './path-factory.js';
import { Table } from './table.js';

/** Options of {@link createTable}. */
export interface CreateTableOptions {
  /** Return the existing schema instead of throwing when the table exists. */
  readonly ignoreIfExists?: boolean;
  /** Name used in errors (default: the location). */
  readonly name?: string;
  /** Where unknown option keys are reported (default: `console.warn` with a `[tidemark]` prefix). */
  readonly logger?: OptionsLogger;
}

/**
 * Creates the table at `location` from `spec`: writes `schema/schema-0` with create-if-absent, so
 * of two concurrent creators exactly one succeeds.
 *
 * @returns the schema written (or the existing one with `ignoreIfExists`).
 * @throws SchemaValidationError for an invalid definition; TableAlreadyExistsError unless `ignoreIfExists`.
 */
export async function createTable(
  fileIO: FileIO,
  location: string,
  spec: TableSpec,
  options: CreateTableOptions = {},
): Promise<TableSchema> {
  const name = options.name ?? location;
  const schema = buildInitialSchema(spec);
  const manager = new SchemaManager(fileIO, metadataPaths(location));
  if ((await manager.latestId()) !== null) {
    if (options.ignoreIfExists) return manager.latest();
    throw new TableAlreadyExistsError(name, location);
  }
  await checkTableLocation(fileIO, location);
  const schemaPath = metadataPaths(location).schemaPath(0);
  const result = await fileIO.createIfAbsent(schemaPath, serializeSchema(schema));
  if (result === 'already-exists') {
    if (options.ignoreIfExists) return parseSchema(await fileIO.read(schemaPath), schemaPath);
    throw new TableAlreadyExistsError(name, location);
  }
  // Paimon stores keys it does not know; a misspelt one (deletion-vector.enabled) would leave the
  // table silently without the feature, so it is reported now, with the nearest known key. The
  // scope is the one opening the table uses, so one process reports a key once.
  warnUnknownOptions(coreOptions(schema), `${location.replace(/\/+$/, '') || location} (schema 0)`, options.logger);
  return schema;
}

/** The location given for a new table would share its directory with other data. */
export class UnsafeLocationError extends TidemarkUserError {}

/**
 * Refuses a table location that would share files with something else: a directory that already
 * holds files (other tables, or anything orphan cleanup of the new table would delete) or one
 * inside an existing table (whose orphan cleanup would delete the new table's files).
 */
async function checkTableLocation(fileIO: FileIO, location: string): Promise<void> {
  if (location.trim() === '') throw new UnsafeLocationError('cannot create a table at an empty location; give the table its own directory');
  for await (const f of fileIO.list(location)) {
    const table = /^(.*)\/schema\/schema-\d+$/.exec(f.path)?.[1];
    throw new UnsafeLocationError(
      table !== undefined
        ? `cannot create a table at ${location}: it already holds table ${table}; give the table its own directory (e.g. <warehouse>/<db>.db/<name>)`
        : `cannot create a table at ${location}: the directory is not empty (it holds ${f.path}); give the table an empty or new directory`,
    );
  }
  const root = location.replace(/\/+$/, '');
  const floor = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(root)?.[0].length ?? 0;
  for (let end = root.lastIndexOf('/'); end > floor; end = root.lastIndexOf('/', end - 1)) {
    const ancestor = root.slice(0, end);
    if (await fileIO.exists(`${ancestor}/schema/schema-0`)) {
      throw new UnsafeLocationError(
        `cannot create a table at ${location}: it is inside table ${ancestor}; give the table its own directory`,
      );
    }
  }
}

/** Suffix of database directories. */
export const DB_SUFFIX = '.db';

/** A database name was not found. */
export class DatabaseNotFoundError extends TidemarkUserError {
  constructor(
    readonly database: string,
    location: string,
  ) {
    super(`database '${database}' does not exist (nothing at ${location})`);
  }
}

/**
 * A local warehouse directory that does not exist. Listing it is refused rather than answered with
 * "no databases": a mistyped warehouse in a scheduled job would otherwise succeed every night
 * having done nothing. (On an object store an empty prefix and a missing one look the same.)
 */
export class WarehouseNotFoundError extends TidemarkUserError {
  constructor(readonly warehouse: string) {
    super(`warehouse ${warehouse} does not exist (no such directory); check the path, or create a database there first`);
  }
}

/** A database that should be new already exists. */
export class DatabaseAlreadyExistsError extends TidemarkUserError {
  constructor(
    readonly database: string,
    location: string,
  ) {
    super(`database '${database}' already exists at ${location}`);
  }
}

/** Dropping a database that still holds tables without `cascade`. */
export class DatabaseNotEmptyError extends TidemarkUserError {
  constructor(
    readonly database: string,
    tables: readonly string[],
  ) {
    super(
      `database '${database}' still has tables (${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''}); drop them first or pass { cascade: true }`,
    );
  }
}

/** A table that should be new already exists. */
export class TableAlreadyExistsError extends TidemarkUserError {
  constructor(
    readonly identifier: string,
    location: string,
  ) {
    super(`table '${identifier}' already exists at ${location}`);
  }
}

/** An identifier or name that cannot be used. */
export class InvalidIdentifierError extends TidemarkUserError {}

/** A parsed `database.table` identifier. */
export interface Identifier {
  readonly database: string;
  readonly table: string;
}

/** Parses `'db.table'` (split at the first dot) or checks an {@link Identifier}. */
export function parseIdentifier(identifier: string | Identifier): Identifier {
  let id: Identifier;
  if (typeof identifier === 'string') {
    const dot = identifier.indexOf('.');
    if (dot <= 0 || dot === identifier.length - 1) {
      throw new InvalidIdentifierError(`table identifier '${identifier}' must have the form <database>.<table>`);
    }
    id = { database: identifier.slice(0, dot), table: identifier.slice(dot + 1) };
  } else id = identifier;
  checkName('database', id.database);
  checkName('table', id.table);
  return id;
}

function checkName(kind: string, name: string): void {
  if (typeof name !== 'string' || name === '' || name.trim() !== name || /[/\\]/.test(name) || name === '.' || name === '..') {
    throw new InvalidIdentifierError(`invalid ${kind} name '${String(name)}': must be non-empty, without slashes or surrounding spaces`);
  }
  if (kind === 'table' && name.startsWith('.')) throw new InvalidIdentifierError(`invalid table name '${name}': must not start with '.'`);
}

/** Settings of a {@link FileSystemCatalog}. */
export interface FileSystemCatalogOptions {
  /** FileIO to use; by default one is resolved from the warehouse location (and closed by {@link FileSystemCatalog.close}). */
  readonly fileIO?: FileIO;
  /** S3 settings when the FileIO is resolved from an `s3://` warehouse. */
  readonly s3?: S3Options;
}

/** A Paimon filesystem catalog rooted at a warehouse location (plain path, `file://`, `s3://` or `memory://`). */
export class FileSystemCatalog {
  readonly fileIO: FileIO;
  private readonly ownsFileIO: boolean;

  constructor(
    readonly warehouse: string,
    options: FileSystemCatalogOptions = {},
  ) {
    this.ownsFileIO = options.fileIO === undefined;
    this.fileIO = options.fileIO ?? resolveFileIO(warehouse, options.s3 ? { s3: options.s3 } : {});
  }

  /** `<warehouse>/<db>.db` */
  databaseLocation(database: string): string {
    checkName('database', database);
    return joinPath(this.warehouse, database + DB_SUFFIX);
  }

  /** `<warehouse>/<db>.db/<table>` */
  tableLocation(identifier: string | Identifier): string {
    const id = parseIdentifier(identifier);
    return joinPath(this.databaseLocation(id.database), id.table);
  }

  /** True when the database directory exists (local) or holds at least one object (object stores). */
  async databaseExists(database: string): Promise<boolean> {
    const location = this.databaseLocation(database);
    const local = this.localPath(location);
    if (local !== undefined) {
      const st = await fs.stat(local).catch(() => undefined);
      return st?.isDirectory() ?? false;
    }
    for await (const _ of this.fileIO.list(location)) return true;
    return false;
  }

  /**
   * Creates a database. On local disk this makes the `<db>.db` directory; on object stores it only
   * validates the name (the database appears with its first table).
   *
   * @throws DatabaseAlreadyExistsError unless `ignoreIfExists`.
   */
  async createDatabase(database: string, options: { ignoreIfExists?: boolean } = {}): Promise<void> {
    const location = this.databaseLocation(database);
    if (await this.databaseExists(database)) {
      if (options.ignoreIfExists) return;
      throw new DatabaseAlreadyExistsError(database, location);
    }
    const local = this.localPath(location);
    if (local !== undefined) await fs.mkdir(local, { recursive: true });
  }

  /**
   * Drops a database. Without `cascade` it must hold no tables.
   *
   * @throws DatabaseNotFoundError unless `ignoreIfNotExists`; DatabaseNotEmptyError.
   */
  async dropDatabase(database: string, options: { ignoreIfNotExists?: boolean; cascade?: boolean } = {}): Promise<void> {
    const location = this.databaseLocation(database);
    if (!(await this.databaseExists(database))) {
      if (options.ignoreIfNotExists) return;
      throw new DatabaseNotFoundError(database, location);
    }
    if (!options.cascade) {
      const tables = await this.listTables(database);
      if (tables.length > 0) throw new DatabaseNotEmptyError(database, tables);
    }
    await this.deleteTree(location);
  }

  /**
   * Database names (without `.db`), sorted.
   *
   * @throws WarehouseNotFoundError when a local warehouse directory does not exist.
   */
  async listDatabases(): Promise<string[]> {
    const names = new Set<string>();
    const local = this.localPath(this.warehouse);
    if (local !== undefined) {
      const entries = await fs.readdir(local, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' || e.code === 'ENOTDIR') throw new WarehouseNotFoundError(this.warehouse);
        throw e;
      });
      for (const e of entries)
        if (e.isDirectory() && e.name.endsWith(DB_SUFFIX) && e.name.length > DB_SUFFIX.length)
          names.add(e.name.slice(0, -DB_SUFFIX.length));
    } else {
      // No delimiter listing in FileIO: stream the keys and keep the first path segment.
      const base = joinPath(this.warehouse, 'x').slice(0, -1);
      for await (const st of this.fileIO.list(this.warehouse)) {
        const rest = st.path.startsWith(base) ? st.path.slice(base.length) : '';
        const slash = rest.indexOf('/');
        if (slash <= 0) continue;
        const seg = rest.slice(0, slash);
        if (seg.endsWith(DB_SUFFIX) && seg.length > DB_SUFFIX.length) names.add(seg.slice(0, -DB_SUFFIX.length));
      }
    }
    return [...names].sort();
  }

  /**
   * Table names of a database (directories holding `schema/schema-<n>`), sorted.
   *
   * @throws DatabaseNotFoundError when the database does not exist.
   */
  async listTables(database: string): Promise<string[]> {
    const location = this.databaseLocation(database);
    const names = new Set<string>();
    const local = this.localPath(location);
    if (local !== undefined) {
      let entries;
      try {
        entries = await fs.readdir(local, { withFileTypes: true });
      } catch {
        throw new DatabaseNotFoundError(database, location);
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const schemas = await fs.readdir(joinPath(local, e.name, 'schema')).catch(() => [] as string[]);
        if (schemas.some((n) => parseNumberedName(n, SCHEMA_PREFIX) !== null)) names.add(e.name);
      }
    } else {
      const base = joinPath(location, 'x').slice(0, -1);
      let any = false;
      for await (const st of this.fileIO.list(location)) {
        any = true;
        const rest = st.path.startsWith(base) ? st.path.slice(base.length) : '';
        const parts = rest.split('/');
        if (parts.length === 3 && parts[1] === 'schema' && parseNumberedName(parts[2]!, SCHEMA_PREFIX) !== null) names.add(parts[0]!);
      }
      if (!any) throw new DatabaseNotFoundError(database, location);
    }
    return [...names].sort();
  }

  /** True when `<table>/schema/` holds a schema file. */
  async tableExists(identifier: string | Identifier): Promise<boolean> {
    const paths = metadataPaths(this.tableLocation(identifier));
    return (await new SchemaManager(this.fileIO, paths).latestId()) !== null;
  }

  /**
   * Creates a table: writes `schema/schema-0` with create-if-absent, so of two concurrent creators
   * exactly one succeeds. The database is created implicitly when missing.
   *
   * @returns the schema written.
   * @throws SchemaValidationError for an invalid definition; TableAlreadyExistsError unless `ignoreIfExists`.
   */
  async createTable(
    identifier: string | Identifier,
    spec: TableSpec,
    options: Pick<CreateTableOptions, 'ignoreIfExists' | 'logger'> = {},
  ): Promise<TableSchema> {
    const id = parseIdentifier(identifier);
    const local = this.localPath(this.databaseLocation(id.database));
    if (local !== undefined) await fs.mkdir(local, { recursive: true });
    return createTable(this.fileIO, this.tableLocation(id), spec, { ...options, name: `${id.database}.${id.table}` });
  }

  /**
   * Drops a table: deletes every object under its directory (streamed listing, batched deletes).
   *
   * @throws TableNotFoundError unless `ignoreIfNotExists`.
   */
  async dropTable(identifier: string | Identifier, options: { ignoreIfNotExists?: boolean } = {}): Promise<void> {
    const location = this.tableLocation(identifier);
    if (!(await this.tableExists(identifier))) {
      if (options.ignoreIfNotExists) return;
      throw new TableNotFoundError(location);
    }
    await this.deleteTree(location);
  }

  /**
   * Opens a table of this catalog. The table shares the catalog's FileIO: close the catalog, not
   * the table.
   *
   * @throws TableNotFoundError when there is no table.
   */
  async getTable(identifier: string | Identifier): Promise<Table> {
    return Table.open(this.tableLocation(identifier), { fileIO: this.fileIO });
  }

  /** Closes the FileIO if the catalog resolved it itself. */
  async close(): Promise<void> {
    if (this.ownsFileIO) await this.fileIO.close();
  }

  private async deleteTree(location: string): Promise<void> {
    const io = this.fileIO;
    async function* paths(): AsyncGenerator<string> {
      for await (const st of io.list(location)) yield st.path;
    }
    await io.deleteMany(paths());
    const local = this.localPath(location);
    if (local !== undefined) await fs.rm(local, { recursive: true, force: true });
  }

  /** File-system path of a location when the FileIO is the local one. */
  private localPath(location: string): string | undefined {
    if (this.fileIO.kind !== 'local') return undefined;
    const parsed = parseLocation(location);
    return parsed.scheme === 'file' ? parsed.path : undefined;
  }
}
