import { defineCommand } from '../command.js';
import { jsonOption, notYetImplemented, tableArgument } from './shared.js';

/** `tidemark schema`: print the current table schema (issue 3). */
export const schemaCommand = defineCommand({
  name: 'schema',
  summary: 'print the table schema (columns with field ids and types, keys, options)',
  usage: { synopsis: ['schema <table> [--json]'], positionals: [tableArgument], options: { json: { ...jsonOption, description: 'print the schema JSON as stored' } } },
  async run() {
    notYetImplemented('schema', 'schema loading in @tidemark/core');
  },
});
