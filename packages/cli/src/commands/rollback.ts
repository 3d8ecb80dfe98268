import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { notYetImplemented, tableArgument } from './shared.js';

/** `tidemark rollback --to <snapshot-id|tag>` (issue 4). */
export const rollbackCommand = defineCommand({
  name: 'rollback',
  summary: 'roll the table back to a snapshot or a tag',
  usage: {
    synopsis: ['rollback <table> --to <snapshot-id|tag> [--force]'],
    positionals: [tableArgument],
    options: {
      to: { type: 'string', valueName: 'snapshot-id|tag', description: 'target snapshot id (digits) or tag name' },
      force: { type: 'boolean', description: 'roll back even though a tag points at a later snapshot' },
    },
  },
  async run(args) {
    if (args.options.to === undefined) throw new UsageError("option '--to' is required", 'rollback');
    notYetImplemented('rollback', 'rollback in @tidemark/core');
  },
});
