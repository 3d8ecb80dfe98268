import { existsSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { resolveFileIO } from '@tidemark/storage';
import { typeToString } from '@tidemark/format';
import { createTable, type ColumnSpec } from '@tidemark/core';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { jsonOption, printLine, tableArgument, tableLocation } from './shared.js';

/** `tidemark create`: create a table. */
export const createCommand = defineCommand({
  name: 'create',
  summary: 'create a table from a JSON column list',
  usage: {
    synopsis: ['create <table> --schema <json-or-file> [--partition a,b] [--primary-key a,b] [--option k=v]... [--json]'],
    description:
      'The schema is a JSON array of {"name": ..., "type": ..., "description"?: ...} with Paimon type strings such as ' +
      '"BIGINT NOT NULL", "DECIMAL(10, 2)", "TIMESTAMP(3)" or "ARRAY<INT>", given inline, as @file or as a file path. ' +
      'Options use Paimon names, e.g. --option bucket=4 --option bucket-key=id.',
    positionals: [tableArgument],
    options: {
      schema: { type: 'string', valueName: 'json-or-file', description: 'columns as JSON, or a file holding it' },
      partition: { type: 'list', valueName: 'a,b', description: 'partition keys' },
      'primary-key': { type: 'list', valueName: 'a,b', description: 'primary key columns' },
      option: { type: 'multiple', valueName: 'k=v', description: 'table option, e.g. bucket=4' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    if (args.options.schema === undefined) throw new UsageError("option '--schema' is required", 'create');
    const options = parseKeyValues(args.options.option, '--option', 'create');
    const columns = readSchemaArgument(args.options.schema, ctx);
    const spec = {
      fields: columns,
      partitionKeys: args.options.partition,
      primaryKeys: args.options['primary-key'],
      options: Object.fromEntries(options),
    };
    const location = tableLocation(args.named['table']!, ctx);
    const fileIO = resolveFileIO(location);
    let schema;
    try {
      const logger = { warn: (m: string) => void ctx.stderr.write(`tidemark create: warning: ${m}\n`) };
      schema = await createTable(fileIO, location, spec, { name: args.named['table']!, logger });
    } finally {
      await fileIO.close();
    }
    if (args.options.json) {
      const fields = schema.fields.map((f) => ({ name: f.name, type: typeToString(f.type) }));
      const { partitionKeys, primaryKeys } = schema;
      await printLine(ctx, JSON.stringify({ command: 'create', table: location, schemaId: schema.id, fields, partitionKeys, primaryKeys }));
      return;
    }
    const cols = schema.fields.map((f) => `${f.name} ${typeToString(f.type)}`).join(', ');
    await printLine(ctx, `created table ${location} (${cols})`);
    if (schema.partitionKeys.length > 0) await printLine(ctx, `  partitioned by ${schema.partitionKeys.join(', ')}`);
    if (schema.primaryKeys.length > 0) await printLine(ctx, `  primary key ${schema.primaryKeys.join(', ')}`);
  },
});

/** Parses repeated `k=v` values; a missing `=` or empty key is a usage error naming the option. */
export function parseKeyValues(values: readonly string[], option: string, command: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of values) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`option '${option}' needs key=value, got '${kv}'`, command);
    out.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  return out;
}

/**
 * The `--schema` value: inline JSON (starts with `[`), `@file`, or a path to a file holding the
 * JSON. Returns the column list; malformed input is a usage error naming the option.
 */
export function readSchemaArgument(value: string, ctx: CommandContext): ColumnSpec[] {
  let text = value;
  let source = "option '--schema'";
  if (!value.trimStart().startsWith('[')) {
    const file = resolvePath(ctx.cwd, value.startsWith('@') ? value.slice(1) : value);
    if (!existsSync(file)) throw new UsageError(`option '--schema' is neither a JSON array nor an existing file: ${value}`, 'create');
    text = readFileSync(file, 'utf8');
    source = `schema file ${file}`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${source} is not valid JSON: ${(e as Error).message}`, 'create');
  }
  if (!Array.isArray(parsed) || parsed.length === 0)
    throw new UsageError(`${source} must be a non-empty JSON array of {"name": ..., "type": ...}`, 'create');
  return parsed.map((c: unknown, i) => {
    const col = c as { name?: unknown; type?: unknown; description?: unknown };
    if (typeof c !== 'object' || c === null || typeof col.name !== 'string' || typeof col.type !== 'string') {
      throw new UsageError(`${source}: column ${i} must be {"name": "<string>", "type": "<Paimon type>"}`, 'create');
    }
    return { name: col.name, type: col.type, ...(typeof col.description === 'string' ? { description: col.description } : {}) };
  });
}
