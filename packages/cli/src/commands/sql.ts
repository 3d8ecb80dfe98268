/**
 * `tidemark sql`: a DuckDB query over tidemark tables. DuckDB is an optional dependency, loaded
 * only here. Each `--table name=location[@ref]` becomes a view: plain append tables on local disk
 * (no deletion vectors, every file written with the read schema) are handed to DuckDB as their
 * Parquet file list; anything else (primary-key merging, deletion vectors, schema evolution, object
 * stores) is read by tidemark's reader and staged as one temporary Parquet file. The result is
 * staged as Parquet too and printed in any result format.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { DataField, TableSchema } from '@tidemark/format';
import { encodeParquetStream, ParquetDataFile, readParquetFile } from '@tidemark/format';
import { parseLocation, LocalFileIO } from '@tidemark/storage';
import type { ScanPlan, Table, TableRead } from '@tidemark/core';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { writeBytes } from '../output/binary-writers.js';
import { emitResult, outputOption, resultFormatOption, type ResultFormat } from './emit-result.js';
import { countedBatches, openTableNamingNeighbours, quietOption, rowProgress, tableLocation } from './shared.js';

type DuckDb = typeof import('@duckdb/node-api');
type DuckConnection = import('@duckdb/node-api').DuckDBConnection;

/** The message when DuckDB is not installed: what to type to get it. */
export const DUCKDB_MISSING =
  'tidemark sql needs DuckDB, an optional dependency that is not installed: run `npm install @duckdb/node-api` ' +
  'in the project that has tidemark (or `npm install -g @duckdb/node-api` next to a global tidemark), then try again';

/** A `--table` argument, parsed. */
export interface SqlTableRef {
  readonly name: string;
  readonly location: string;
  readonly at: { snapshotId?: number; timestamp?: number; tag?: string };
}

/** `tidemark sql`. */
export const sqlCommand = defineCommand({
  name: 'sql',
  summary: 'run a DuckDB SQL query over tables (needs the optional @duckdb/node-api)',
  usage: {
    synopsis: ['sql "<query>" --table <name>=<table>[@<snapshot|tag|timestamp>] ... [--format F] [--output FILE]'],
    description:
      'Each --table makes a table readable in the query under <name>, at its latest snapshot or at @N (snapshot id), ' +
      '@<tag> or @<ISO-8601 time>. Plain append tables on local disk are read by DuckDB from their Parquet files; ' +
      'primary-key tables, deletion vectors, evolved schemas and S3 tables are read by tidemark first. One statement, ' +
      'whose result is printed like `read` prints rows. DuckDB is optional: npm install @duckdb/node-api.',
    positionals: [{ name: 'query', description: 'one SQL statement (DuckDB dialect)' }],
    options: {
      table: { type: 'multiple', valueName: 'name=table[@ref]', description: 'a table the query reads, under this name (repeatable)' },
      format: resultFormatOption,
      output: outputOption,
      quiet: quietOption,
    },
  },
  async run(args, ctx) {
    const query = args.named['query']!.trim().replace(/;\s*$/, '');
    if (query === '') throw new UsageError('the query is empty', 'sql');
    const refs = args.options.table.map((t) => parseTableRef(t, ctx));
    const names = new Set<string>();
    for (const r of refs) {
      if (names.has(r.name.toLowerCase())) throw new UsageError(`--table name '${r.name}' is given twice`, 'sql');
      names.add(r.name.toLowerCase());
    }
    const duck = await loadDuckDb();
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-sql-'));
    const instance = await duck.DuckDBInstance.create(':memory:');
    let connection: DuckConnection | undefined;
    try {
      connection = await instance.connect();
      for (const [i, ref] of refs.entries()) await registerTable(connection, ref, join(dir, `table-${i}.parquet`), ctx, args.options.quiet);
      const result = join(dir, 'result.parquet');
      try {
        await connection.run(`COPY (${query}) TO ${literal(result)} (FORMAT parquet)`);
      } catch (e) {
        throw new CliError(`the query failed: ${(e as Error).message}`, { cause: e });
      }
      const io = new LocalFileIO();
      try {
        const batches = readParquetFile(io, result)[Symbol.asyncIterator]();
        const first = await batches.next();
        // An empty result has no batch to take the schema from; the file's footer still has it.
        const schema = first.done ? await (await ParquetDataFile.open(io, result)).arrowSchema() : first.value.schema;
        await emitResult(ctx, {
          command: 'sql',
          format: (args.options.format ?? 'jsonl') as ResultFormat,
          output: args.options.output,
          batches: (async function* () {
            if (first.done) return;
            yield first.value;
            for (let n = await batches.next(); !n.done; n = await batches.next()) yield n.value;
          })(),
          schema,
          quiet: args.options.quiet,
        });
      } finally {
        await io.close();
      }
    } finally {
      connection?.closeSync();
      instance.closeSync();
      await rm(dir, { recursive: true, force: true });
    }
  },
});

/** Loads DuckDB, or says how to install it. */
async function loadDuckDb(): Promise<DuckDb> {
  try {
    return await import('@duckdb/node-api');
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new CliError(DUCKDB_MISSING, { cause: e });
    throw new CliError(`DuckDB (@duckdb/node-api) is installed but does not load: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Parses `name=location[@ref]`: ref is a snapshot id (digits), an ISO-8601 time (starts with a
 * date) or a tag name. An `@` followed by a `/` belongs to the location.
 *
 * @throws UsageError naming the argument.
 */
export function parseTableRef(arg: string, ctx: CommandContext): SqlTableRef {
  const eq = arg.indexOf('=');
  const name = eq < 0 ? '' : arg.slice(0, eq).trim();
  if (eq < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new UsageError(`--table '${arg}' must look like name=<table-location>[@ref], the name a plain SQL identifier`, 'sql');
  }
  let location = arg.slice(eq + 1);
  let ref: string | undefined;
  const at = location.lastIndexOf('@');
  if (at >= 0 && !location.slice(at + 1).includes('/')) {
    ref = location.slice(at + 1);
    location = location.slice(0, at);
  }
  if (location.trim() === '') throw new UsageError(`--table '${arg}' has no table location`, 'sql');
  if (ref === '') throw new UsageError(`--table '${arg}' ends with '@' but names no snapshot, tag or time`, 'sql');
  const when =
    ref === undefined
      ? {}
      : /^\d+$/.test(ref)
        ? { snapshotId: Number(ref) }
        : /^\d{4}-\d{2}-\d{2}/.test(ref)
          ? { timestamp: parseInstant(ref, `--table ${name}`) }
          : { tag: ref };
  return { name, location: tableLocation(location, ctx), at: when };
}

/** Makes `ref` a view named `ref.name` in `connection`. */
async function registerTable(
  connection: DuckConnection,
  ref: SqlTableRef,
  staging: string,
  ctx: CommandContext,
  quiet: boolean,
): Promise<void> {
  const table = await openTableNamingNeighbours(ref.location, ctx);
  try {
    const read = table.newRead(ref.at);
    const plan = await read.plan();
    const schema = await read.tableSchema();
    const columns = schema.fields.map((f) => ident(f.name)).join(', ');
    const files = await directFiles(table, plan, schema);
    const source = files
      ? `read_parquet([${files.map(literal).join(', ')}], hive_partitioning = false, union_by_name = false)`
      : `read_parquet(${literal(await stage(read, staging, ctx, quiet, ref.name))}, hive_partitioning = false)`;
    await connection.run(`CREATE VIEW ${ident(ref.name)} AS SELECT ${columns} FROM ${source}`);
  } finally {
    await table.close();
  }
}

/**
 * The data files of `plan` when DuckDB can read them as they are: an append table, no deletion
 * vectors, local Parquet files all written with the read schema's fields (so names, which is how
 * DuckDB matches columns, are the field ids' names). Undefined otherwise.
 */
async function directFiles(table: Table, plan: ScanPlan, schema: TableSchema): Promise<string[] | undefined> {
  if (table.isPrimaryKeyTable || plan.splits.length === 0) return undefined;
  const sameFields = new Map<number, boolean>();
  const files: string[] = [];
  for (const split of plan.splits) {
    if (split.deletionFiles.size > 0) return undefined;
    for (const f of split.files) {
      if (!f.meta.fileName.endsWith('.parquet')) return undefined;
      const location = parseLocation(f.path);
      if (location.scheme !== 'file' || location.path === undefined) return undefined;
      let same = sameFields.get(f.meta.schemaId);
      if (same === undefined) {
        same = f.meta.schemaId === schema.id || fieldsEqual((await table.schemaManager.schema(f.meta.schemaId)).fields, schema.fields);
        sameFields.set(f.meta.schemaId, same);
      }
      if (!same) return undefined;
      files.push(location.path);
    }
  }
  return files;
}

function fieldsEqual(a: readonly DataField[], b: readonly DataField[]): boolean {
  return (
    a.length === b.length &&
    a.every((f, i) => f.id === b[i]!.id && f.name === b[i]!.name && JSON.stringify(f.type) === JSON.stringify(b[i]!.type))
  );
}

/** Reads the table with tidemark (merging, deletion vectors, schema evolution) into one Parquet file. */
async function stage(read: TableRead, path: string, ctx: CommandContext, quiet: boolean, name: string): Promise<string> {
  const progress = rowProgress(ctx, `reading ${name}`, quiet);
  const out = createWriteStream(path);
  try {
    for await (const chunk of encodeParquetStream(countedBatches(read.batches(), progress), await read.arrowSchema())) {
      ctx.signal.throwIfAborted();
      await writeBytes(out, chunk, ctx.signal);
    }
    out.end();
    await finished(out);
  } catch (e) {
    out.destroy();
    throw e;
  } finally {
    progress.finish();
  }
  return path;
}

/** A SQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A quoted SQL identifier. */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
