/**
 * What to tell someone whose `<table>` argument names no table: the tables that do exist next to
 * it (same database), or the tables of the database they named, or the databases of a warehouse.
 */
import { DB_SUFFIX, FileSystemCatalog } from '@tidemark/core';
import { joinPath, parseLocation, resolveFileIO, type FileIO } from '@tidemark/storage';
import { closest } from '../args.js';

/**
 * Object stores have no directory listing here, so a hint scans at most this many keys: enough to
 * name the tables of an ordinary database, and a wrong path on a huge one still fails promptly.
 */
const HINT_KEY_BUDGET = 5_000;
/** At most this many names are printed. */
const MAX_NAMES = 20;

/**
 * One sentence naming the tables (or databases) near `location`, or undefined when there is
 * nothing helpful to say. Never throws: a hint must not hide the original error.
 */
export async function nearbyTablesHint(location: string): Promise<string | undefined> {
  let io: FileIO | undefined;
  try {
    io = resolveFileIO(location);
    const trimmed = location.replace(/\/+$/, '');
    const name = basename(trimmed);
    const parent = dirname(trimmed);
    if (name.endsWith(DB_SUFFIX) && parent !== undefined) {
      const tables = await tablesIn(io, parent, name.slice(0, -DB_SUFFIX.length));
      if (tables && tables.length > 0) return `${trimmed} is a database; its tables: ${names(tables)}`;
      return tables ? `${trimmed} is a database without tables` : undefined;
    }
    if (parent !== undefined && basename(parent).endsWith(DB_SUFFIX)) {
      const db = basename(parent).slice(0, -DB_SUFFIX.length);
      const tables = await tablesIn(io, dirname(parent) ?? '', db);
      if (tables && tables.length > 0) return `tables in ${parent}: ${names(tables)}${didYouMean(name, tables)}`;
      if (tables) return `the database ${parent} has no tables`;
      const dbs = await databasesIn(io, dirname(parent) ?? '');
      if (dbs.length > 0) return `there is no database '${db}'; databases in ${dirname(parent)}: ${names(dbs)}${didYouMean(db, dbs)}`;
      return undefined;
    }
    const dbs = await databasesIn(io, trimmed);
    if (dbs.length > 0)
      return `${trimmed} looks like a warehouse; a table location is <warehouse>/<db>.db/<table>; databases: ${names(dbs)}`;
    return undefined;
  } catch {
    return undefined;
  } finally {
    await io?.close().catch(() => undefined);
  }
}

function names(list: readonly string[]): string {
  return list.length > MAX_NAMES ? `${list.slice(0, MAX_NAMES).join(', ')}, … (${list.length} in all)` : list.join(', ');
}

function didYouMean(name: string, candidates: readonly string[]): string {
  const c = closest(name, candidates);
  return c ? ` (did you mean ${c}?)` : '';
}

function basename(location: string): string {
  return location.slice(location.lastIndexOf('/') + 1);
}

/** The location without its last segment; undefined at the root of a bucket or file system. */
function dirname(location: string): string | undefined {
  const slash = location.lastIndexOf('/');
  if (slash <= 0 || location.slice(0, slash).endsWith(':/')) return undefined;
  const parent = location.slice(0, slash);
  // `s3://bucket` itself is a location, `s3:/` is not.
  return /^[a-z][a-z0-9+.-]*:\/?$/i.test(parent) ? undefined : parent;
}

function isLocal(io: FileIO, location: string): boolean {
  return io.kind === 'local' && parseLocation(location).scheme === 'file';
}

/** Tables of `<warehouse>/<db>.db`, or undefined when that database does not exist. */
async function tablesIn(io: FileIO, warehouse: string, db: string): Promise<string[] | undefined> {
  if (isLocal(io, warehouse)) {
    const catalog = new FileSystemCatalog(warehouse, { fileIO: io });
    return (await catalog.databaseExists(db)) ? catalog.listTables(db) : undefined;
  }
  const found = await firstSegments(io, joinPath(warehouse, db + DB_SUFFIX), (parts) => parts[1] === 'schema');
  return found.any ? found.names : undefined;
}

/** Databases of a warehouse (names without `.db`). */
async function databasesIn(io: FileIO, warehouse: string): Promise<string[]> {
  if (isLocal(io, warehouse)) return new FileSystemCatalog(warehouse, { fileIO: io }).listDatabases();
  const found = await firstSegments(io, warehouse, (parts) => parts[0]!.endsWith(DB_SUFFIX) && parts[0]!.length > DB_SUFFIX.length);
  return found.names.map((n) => n.slice(0, -DB_SUFFIX.length));
}

/** First path segments under `dir` whose key parts pass `keep`, from a bounded scan of the keys. */
async function firstSegments(io: FileIO, dir: string, keep: (parts: string[]) => boolean): Promise<{ names: string[]; any: boolean }> {
  const base = joinPath(dir, 'x').slice(0, -1);
  const found = new Set<string>();
  let seen = 0;
  for await (const st of io.list(dir)) {
    if (++seen > HINT_KEY_BUDGET) break;
    const parts = (st.path.startsWith(base) ? st.path.slice(base.length) : '').split('/');
    if (parts.length > 1 && keep(parts)) found.add(parts[0]!);
  }
  return { names: [...found].sort(), any: seen > 0 };
}
