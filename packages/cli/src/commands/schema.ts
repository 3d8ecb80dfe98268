import { serializeSchema, typeToString } from '@tidemark/format';
import { defineCommand } from '../command.js';
import { jsonOption, tableArgument, textTable, withTable, branchOption } from './shared.js';

/** `tidemark schema`: print the current table schema. */
export const schemaCommand = defineCommand({
  name: 'schema',
  summary: 'print the table schema (columns with field ids and types, keys, options)',
  usage: {
    synopsis: ['schema <table> [--json]'],
    positionals: [tableArgument],
    options: {
      json: { ...jsonOption, description: 'print the schema JSON as stored' },
      branch: branchOption,
    },
  },
  async run(args, ctx) {
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const schema = await table.schemaManager.latest();
      if (args.options.json) {
        ctx.stdout.write(serializeSchema(schema) + '\n');
        return;
      }
      const pk = new Set(schema.primaryKeys);
      const part = new Set(schema.partitionKeys);
      const rows = schema.fields.map((f) => {
        const keys = [pk.has(f.name) ? 'primary key' : '', part.has(f.name) ? 'partition' : ''].filter((k) => k !== '').join(', ');
        return [String(f.id), f.name, typeToString(f.type), keys, f.description ?? ''];
      });
      let out = `schema ${schema.id} of ${table.location}\n\n`;
      out += textTable(['id', 'name', 'type', 'key', 'description'], rows, [true]);
      out += `\npartition keys: ${schema.partitionKeys.join(', ') || '(none)'}\n`;
      out += `primary keys: ${schema.primaryKeys.join(', ') || '(none)'}\n`;
      out += `highest field id: ${schema.highestFieldId}\n`;
      const options = Object.entries(schema.options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out += `options:${options.length === 0 ? ' (none)' : ''}\n`;
      for (const [k, v] of options) out += `  ${k} = ${v}\n`;
      if (schema.comment) out += `comment: ${schema.comment}\n`;
      ctx.stdout.write(out);
    });
  },
});
