import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { notYetImplemented, snapshotOption, tableArgument } from './shared.js';

const actions = ['create', 'delete', 'list'];

/** `tidemark tag create|delete|list` (issue 4). */
export const tagCommand = defineCommand({
  name: 'tag',
  summary: 'create, delete or list tags',
  usage: {
    synopsis: ['tag create <table> <name> [--snapshot N]', 'tag delete <table> <name>', 'tag list <table> [--json]'],
    positionals: [
      { name: 'action', description: 'create, delete or list' },
      tableArgument,
      { name: 'name', description: 'tag name (create, delete)', required: false },
    ],
    options: { snapshot: { ...snapshotOption, description: 'tag this snapshot (default latest)' }, json: { type: 'boolean', description: 'list as JSON lines' } },
  },
  async run(args) {
    const action = args.named['action']!;
    if (!actions.includes(action)) throw new UsageError(`unknown tag action '${action}'; use create, delete or list`, 'tag');
    const name = args.named['name'];
    if (action !== 'list' && name === undefined) throw new UsageError(`'tag ${action}' needs a tag name`, 'tag');
    if (action === 'list' && name !== undefined) throw new UsageError(`unexpected argument '${name}'`, 'tag');
    if (action !== 'create' && args.options.snapshot !== undefined) throw new UsageError(`option '--snapshot' only applies to 'tag create'`, 'tag');
    notYetImplemented(`tag ${action}`, 'tags in @tidemark/core');
  },
});
