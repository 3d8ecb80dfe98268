import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { notYetImplemented, tableArgument } from './shared.js';

/** Each alter action and the arguments it takes after the action name. */
const actions: Readonly<Record<string, readonly string[]>> = {
  'add-column': ['name', 'type'],
  'drop-column': ['name'],
  'rename-column': ['name', 'new-name'],
  'alter-type': ['name', 'type'],
  'set-option': ['key', 'value'],
  'remove-option': ['key'],
};

/** `tidemark alter` schema evolution (issue 4). */
export const alterCommand = defineCommand({
  name: 'alter',
  summary: 'evolve the schema: add, drop, rename or widen columns; set or remove options',
  usage: {
    synopsis: Object.entries(actions).map(([a, params]) => `alter <table> ${a} ${params.map((p) => `<${p}>`).join(' ')}`),
    positionals: [tableArgument, { name: 'action', description: Object.keys(actions).join(', ') }, { name: 'arguments', description: 'what the action needs', required: false, variadic: true }],
    options: {},
  },
  async run(args) {
    const [, action, ...rest] = args.positionals;
    const params = actions[action!];
    if (!params) throw new UsageError(`unknown alter action '${action!}'; use ${Object.keys(actions).join(', ')}`, 'alter');
    if (rest.length !== params.length) throw new UsageError(`'alter ${action!}' needs ${params.map((p) => `<${p}>`).join(' ')}`, 'alter');
    notYetImplemented(`alter ${action!}`, 'schema evolution in @tidemark/core');
  },
});
