import { resolveFileIO } from '@tidemark/storage';
import { typeToString } from '@tidemark/format';
import { alterTable, metadataPaths } from '@tidemark/core';
import { ALTER_ACTIONS, alterChanges } from './alter-changes.js';
import { defineCommand } from '../command.js';
import { jsonOption, printLine, tableArgument, tableLocation } from './shared.js';

/** `tidemark alter`: schema evolution. */
export const alterCommand = defineCommand({
  name: 'alter',
  summary: 'evolve the schema: add, drop, rename or retype columns; set or remove options',
  usage: {
    synopsis: Object.values(ALTER_ACTIONS).map((a) => `alter <table> ${a.usage}`),
    description:
      'Each change writes a new schema-<n> with create-if-absent; existing data files keep their schema and are read ' +
      'through the field ids. Types may be unquoted words (DECIMAL(12, 2) NOT NULL). set-option takes `key value` or ' +
      '`key=value [key=value ...]`. alter-type accepts the changes Paimon casts (INT→BIGINT, INT→STRING, STRING→BYTES, ' +
      "DOUBLE→INT, TIMESTAMP→DATE, …; docs/writing.md lists them); old files are read with Paimon's cast rules. " +
      'On a NOT NULL column give `<type> NOT NULL` to keep the constraint or `<type> NULL` to drop it.',
    positionals: [
      tableArgument,
      { name: 'action', description: Object.keys(ALTER_ACTIONS).join(', ') },
      { name: 'arguments', description: 'what the action needs', required: false, variadic: true },
    ],
    options: {
      after: { type: 'string', valueName: 'col', description: 'add-column / move-column: place after this column' },
      first: { type: 'boolean', description: 'add-column / move-column: place first' },
      comment: { type: 'string', valueName: 'text', description: 'add-column: column comment' },
      json: jsonOption,
    },
    conflicts: [['after', 'first']],
  },
  async run(args, ctx) {
    const [tableArg, action, ...rest] = args.positionals;
    const changes = alterChanges(action!, rest, args.options);
    const location = tableLocation(tableArg!, ctx);
    const fileIO = resolveFileIO(location);
    try {
      const schema = await alterTable(fileIO, metadataPaths(location), changes);
      if (args.options.json) {
        const fields = schema.fields.map((f) => ({ name: f.name, type: typeToString(f.type) }));
        await printLine(ctx, JSON.stringify({ command: 'alter', table: location, action, schemaId: schema.id, fields }));
        return;
      }
      await printLine(
        ctx,
        `altered ${location}: schema ${schema.id} (${schema.fields.map((f) => `${f.name} ${typeToString(f.type)}`).join(', ')})`,
      );
    } finally {
      await fileIO.close();
    }
  },
});
