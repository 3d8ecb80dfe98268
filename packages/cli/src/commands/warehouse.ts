/**
 * Warehouse commands: `tidemark db create|list|drop` and `tidemark table list|drop`, on a warehouse
 * location laid out as Paimon's filesystem catalog (`<warehouse>/<db>.db/<table>/`).
 */
import { DatabaseNotFoundError, FileSystemCatalog, TableNotFoundError, parseIdentifier } from '@tidemark/core';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { formatBytes, writeJsonSummary } from '../output/progress.js';
import { dryRunOption, jsonOption, printLine, tableLocation, textTable } from './shared.js';

const warehouseArgument = {
  name: 'warehouse',
  description: 'warehouse location: a local path, file://… or s3://bucket/prefix',
};

const yesOption = { type: 'boolean', short: 'y', description: 'really drop: without it (or --dry-run) drop refuses' } as const;

async function withCatalog<T>(arg: string, ctx: CommandContext, fn: (catalog: FileSystemCatalog) => Promise<T>): Promise<T> {
  const catalog = new FileSystemCatalog(tableLocation(arg, ctx));
  try {
    return await fn(catalog);
  } finally {
    await catalog.close();
  }
}

/** Objects and bytes under `location`, from a streamed listing. */
async function footprint(catalog: FileSystemCatalog, location: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const st of catalog.fileIO.list(location)) {
    files++;
    bytes += st.size;
  }
  return { files, bytes };
}

function refuseWithoutYes(what: string, files: number, bytes: number, command: string): never {
  throw new UsageError(
    `dropping ${what} deletes ${files} file(s), ${formatBytes(bytes)}, for good: add --yes to drop it, or --dry-run to only see this`,
    command,
  );
}

/** `tidemark db create|list|drop`. */
export const dbCommand = defineCommand({
  name: 'db',
  summary: 'create, list or drop the databases of a warehouse',
  usage: {
    synopsis: [
      'db list <warehouse> [--json]',
      'db create <warehouse> <name> [--if-not-exists] [--json]',
      'db drop <warehouse> <name> [--cascade] (--yes | --dry-run) [--json]',
    ],
    description:
      'A database is the directory <warehouse>/<name>.db. On object stores a database exists once it holds a table, so ' +
      "'db create' there only checks the name. 'db drop' refuses a database with tables unless --cascade, and deletes " +
      'nothing without --yes; --dry-run lists what it would delete.',
    positionals: [
      { name: 'action', description: 'list, create or drop' },
      warehouseArgument,
      { name: 'name', description: 'database name (create, drop)', required: false },
    ],
    options: {
      'if-not-exists': { type: 'boolean', description: 'create: succeed when the database exists' },
      cascade: { type: 'boolean', description: 'drop: also drop the tables of the database' },
      yes: yesOption,
      'dry-run': dryRunOption,
      json: jsonOption,
    },
    conflicts: [['yes', 'dry-run']],
  },
  async run(args, ctx) {
    const action = args.named['action']!;
    const name = args.named['name'];
    const o = args.options;
    if (!['list', 'create', 'drop'].includes(action)) throw new UsageError(`unknown db action '${action}'; use list, create or drop`, 'db');
    if (action === 'list' && name !== undefined) throw new UsageError(`unexpected argument '${name}'`, 'db');
    if (action !== 'list' && name === undefined) throw new UsageError(`'db ${action}' needs a database name`, 'db');
    if (action !== 'create' && o['if-not-exists']) throw new UsageError("option '--if-not-exists' only applies to 'db create'", 'db');
    for (const flag of ['cascade', 'yes', 'dry-run'] as const) {
      if (action !== 'drop' && o[flag]) throw new UsageError(`option '--${flag}' only applies to 'db drop'`, 'db');
    }
    await withCatalog(args.named['warehouse']!, ctx, async (catalog) => {
      if (action === 'list') {
        const dbs = await catalog.listDatabases();
        if (o.json) await writeJsonSummary(ctx.stdout, { warehouse: catalog.warehouse, databases: dbs }, ctx.signal);
        else if (dbs.length === 0) await printLine(ctx, `no databases in ${catalog.warehouse}`);
        else for (const d of dbs) await printLine(ctx, d);
        return;
      }
      const db = name!;
      const location = catalog.databaseLocation(db);
      if (action === 'create') {
        const existed = await catalog.databaseExists(db);
        await catalog.createDatabase(db, { ignoreIfExists: o['if-not-exists'] });
        if (o.json) await writeJsonSummary(ctx.stdout, { database: db, location, created: !existed }, ctx.signal);
        else await printLine(ctx, existed ? `database '${db}' already exists at ${location}` : `created database '${db}' at ${location}`);
        return;
      }
      if (!(await catalog.databaseExists(db))) {
        const dbs = await catalog.listDatabases();
        throw new CliError(
          `${new DatabaseNotFoundError(db, location).message}; ${dbs.length > 0 ? `databases: ${dbs.join(', ')}` : 'the warehouse has no databases'}`,
        );
      }
      const tables = await catalog.listTables(db);
      if (tables.length > 0 && !o.cascade) {
        throw new CliError(`database '${db}' holds ${tables.length} table(s) (${tables.join(', ')}); add --cascade to drop them too`);
      }
      const { files, bytes } = await footprint(catalog, location);
      if (!o.yes && !o['dry-run']) refuseWithoutYes(`database '${db}' (${tables.length} table(s))`, files, bytes, 'db');
      if (!o['dry-run']) await catalog.dropDatabase(db, { cascade: o.cascade });
      const summary = { database: db, location, tables, files, bytes, dryRun: o['dry-run'] };
      if (o.json) await writeJsonSummary(ctx.stdout, summary, ctx.signal);
      else {
        const verb = o['dry-run'] ? 'would drop' : 'dropped';
        await printLine(
          ctx,
          `${verb} database '${db}': ${tables.length} table(s)${tables.length ? ` (${tables.join(', ')})` : ''}, ${files} file(s), ${formatBytes(bytes)}`,
        );
      }
    });
  },
});

/** `tidemark table list|drop`. */
export const tableCommand = defineCommand({
  name: 'table',
  summary: 'list the tables of a warehouse (or of one database), or drop a table',
  usage: {
    synopsis: ['table list <warehouse> [<db>] [--json]', 'table drop <warehouse> <db.table> (--yes | --dry-run) [--json]'],
    description:
      'list prints db.table names (of every database, or of <db>) with their locations; --json prints ' +
      '{"warehouse", "tables": [{"database", "table", "location"}]}. drop deletes every file of the table and nothing ' +
      'without --yes; --dry-run shows how many files and bytes it would delete.',
    positionals: [
      { name: 'action', description: 'list or drop' },
      warehouseArgument,
      { name: 'name', description: 'list: a database; drop: db.table', required: false },
    ],
    options: { yes: yesOption, 'dry-run': dryRunOption, json: jsonOption },
    conflicts: [['yes', 'dry-run']],
  },
  async run(args, ctx) {
    const action = args.named['action']!;
    const name = args.named['name'];
    const o = args.options;
    if (!['list', 'drop'].includes(action)) throw new UsageError(`unknown table action '${action}'; use list or drop`, 'table');
    if (action === 'drop' && name === undefined) throw new UsageError("'table drop' needs the table as db.table", 'table');
    if (action === 'list' && (o.yes || o['dry-run']))
      throw new UsageError("options '--yes' and '--dry-run' only apply to 'table drop'", 'table');
    await withCatalog(args.named['warehouse']!, ctx, async (catalog) => {
      if (action === 'list') {
        const dbs = name !== undefined ? [name] : await catalog.listDatabases();
        const rows: { database: string; table: string; location: string }[] = [];
        for (const db of dbs) {
          for (const t of await catalog.listTables(db))
            rows.push({ database: db, table: t, location: catalog.tableLocation({ database: db, table: t }) });
        }
        if (o.json) await writeJsonSummary(ctx.stdout, { warehouse: catalog.warehouse, tables: rows }, ctx.signal);
        else if (rows.length === 0)
          await printLine(ctx, `no tables in ${name !== undefined ? catalog.databaseLocation(name) : catalog.warehouse}`);
        else
          ctx.stdout.write(
            textTable(
              ['table', 'location'],
              rows.map((r) => [`${r.database}.${r.table}`, r.location]),
            ),
          );
        return;
      }
      const id = parseIdentifier(name!);
      const location = catalog.tableLocation(id);
      if (!(await catalog.tableExists(id))) {
        const tables = (await catalog.databaseExists(id.database)) ? await catalog.listTables(id.database) : [];
        throw new TableNotFoundError(
          location,
          tables.length > 0 ? `tables in database '${id.database}': ${tables.join(', ')}` : `database '${id.database}' has no tables`,
        );
      }
      const { files, bytes } = await footprint(catalog, location);
      if (!o.yes && !o['dry-run']) refuseWithoutYes(`table ${id.database}.${id.table}`, files, bytes, 'table');
      if (!o['dry-run']) await catalog.dropTable(id);
      if (o.json)
        await writeJsonSummary(
          ctx.stdout,
          { table: `${id.database}.${id.table}`, location, files, bytes, dryRun: o['dry-run'] },
          ctx.signal,
        );
      else
        await printLine(
          ctx,
          `${o['dry-run'] ? 'would drop' : 'dropped'} table ${id.database}.${id.table}: ${files} file(s), ${formatBytes(bytes)}`,
        );
    });
  },
});
