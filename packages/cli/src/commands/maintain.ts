import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { dryRunOption, jsonOption, notYetImplemented } from './shared.js';

/** `tidemark maintain`: all maintenance for cron (issue 6). */
export const maintainCommand = defineCommand({
  name: 'maintain',
  summary: 'expire snapshots, remove orphans and compact each table according to its options',
  usage: {
    synopsis: ['maintain <table>... [--config <file>] [--dry-run] [--json]', 'maintain --warehouse <uri> [--config <file>] [--dry-run] [--json]'],
    positionals: [{ name: 'table', description: 'table directories', required: false, variadic: true }],
    options: {
      warehouse: { type: 'string', valueName: 'uri', description: 'maintain every table of this warehouse' },
      config: { type: 'string', valueName: 'file', description: 'JSON file with per-job settings' },
      'dry-run': dryRunOption,
      json: jsonOption,
    },
  },
  async run(args) {
    const hasTables = args.positionals.length > 0;
    if (hasTables === (args.options.warehouse !== undefined)) throw new UsageError('give either one or more <table> arguments or --warehouse <uri>', 'maintain');
    notYetImplemented('maintain', 'the jobs of @tidemark/maintenance');
  },
});
