import { resolveFileIO } from '@tidemark/storage';
import { typeToString } from '@tidemark/format';
import { ALTER_USAGE, SchemaChangeError, alterTable, metadataPaths, parseAlterArgs } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { printLine, tableArgument, tableLocation } from './shared.js';

/** Each alter action and the arguments it needs at least (more are allowed where the usage says so). */
const actions: Readonly<Record<string, readonly string[]>> = {
  'add-column': ['name', 'type'],
  'drop-column': ['name'],
  'rename-column': ['name', 'new-name'],
  'alter-type': ['name', 'type'],
  'set-option': ['key', 'value'],
  'remove-option': ['key'],
  'move-column': ['name'],
  'comment-column': ['name', 'text'],
  comment: ['text'],
};

/** `tidemark alter` schema evolution (issue 4). */
export const alterCommand = defineCommand({
  name: 'alter',
  summary: 'evolve the schema: add, drop, rename or widen columns; set or remove options',
  usage: {
    synopsis: Object.keys(actions).map((a) => `alter <table> ${ALTER_USAGE[a] ?? a}`),
    description:
      'Each change writes a new schema-<n> with create-if-absent; existing data files keep their schema and are read ' +
      'through the field ids. Types may be unquoted words (DECIMAL(12, 2) NOT NULL). set-option takes `key value` or ' +
      '`key=value [key=value ...]`. Widening: INT→BIGINT, FLOAT→DOUBLE, larger DECIMAL precision, longer VARCHAR. ' +
      'On a NOT NULL column give `<type> NOT NULL` to keep the constraint or `<type> NULL` to drop it.',
    positionals: [tableArgument, { name: 'action', description: Object.keys(actions).join(', ') }, { name: 'arguments', description: 'what the action needs', required: false, variadic: true }],
    options: {
      after: { type: 'string', valueName: 'col', description: 'add-column / move-column: place after this column' },
      first: { type: 'boolean', description: 'add-column / move-column: place first' },
      comment: { type: 'string', valueName: 'text', description: 'add-column: column comment' },
    },
    conflicts: [['after', 'first']],
  },
  async run(args, ctx) {
    const [tableArg, action, ...rest] = args.positionals;
    const params = actions[action!];
    if (!params) throw new UsageError(`unknown alter action '${action!}'; use ${Object.keys(actions).join(', ')}`, 'alter');
    if (rest.length < params.length && !(action === 'set-option' && rest.length >= 1 && rest.every((r) => r.includes('=')))) {
      throw new UsageError(`'alter ${action!}' needs ${params.map((p) => `<${p}>`).join(' ')}`, 'alter');
    }
    let words = rest;
    // `set-option key value` (the documented form) is `key=value` for the parser.
    if (action === 'set-option' && rest.length === 2 && !rest[0]!.includes('=')) words = [`${rest[0]!}=${rest[1]!}`];
    const flags: string[] = [];
    if (args.options.after !== undefined) flags.push('--after', args.options.after);
    if (args.options.first) flags.push('--first');
    if (args.options.comment !== undefined) flags.push('--comment', args.options.comment);
    let changes;
    try {
      changes = parseAlterArgs(action!, [...words, ...flags]);
    } catch (e) {
      if (e instanceof SchemaChangeError) throw new UsageError(e.message, 'alter');
      throw e;
    }
    const location = tableLocation(tableArg!, ctx);
    const fileIO = resolveFileIO(location);
    try {
      const schema = await alterTable(fileIO, metadataPaths(location), changes);
      await printLine(ctx, `altered ${location}: schema ${schema.id} (${schema.fields.map((f) => `${f.name} ${typeToString(f.type)}`).join(', ')})`);
    } finally {
      await fileIO.close();
    }
  },
});
