import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { notYetImplemented, tableArgument } from './shared.js';

/** `tidemark create`: create a table (issue 4). */
export const createCommand = defineCommand({
  name: 'create',
  summary: 'create a table from a JSON column list',
  usage: {
    synopsis: ['create <table> --schema <json-or-file> [--partition a,b] [--primary-key a,b] [--option k=v]...'],
    description: 'The schema is a JSON array of {"name": ..., "type": ...} with Paimon type strings such as "BIGINT NOT NULL", "DECIMAL(10, 2)" or "TIMESTAMP(3)", given inline or as a file path.',
    positionals: [tableArgument],
    options: {
      schema: { type: 'string', valueName: 'json-or-file', description: 'columns as JSON, or a file holding it' },
      partition: { type: 'list', valueName: 'a,b', description: 'partition keys' },
      'primary-key': { type: 'list', valueName: 'a,b', description: 'primary key columns' },
      option: { type: 'multiple', valueName: 'k=v', description: 'table option, e.g. bucket=4' },
    },
  },
  async run(args) {
    if (args.options.schema === undefined) throw new UsageError("option '--schema' is required", 'create');
    parseKeyValues(args.options.option, '--option', 'create');
    notYetImplemented('create', 'the filesystem catalog of @tidemark/core');
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
