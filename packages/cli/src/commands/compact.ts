import { defineCommand } from '../command.js';
import { parseKeyValues } from './create.js';
import { dryRunOption, jsonOption, notYetImplemented, tableArgument } from './shared.js';

/** `tidemark compact` (issue 6). */
export const compactCommand = defineCommand({
  name: 'compact',
  summary: 'bin-pack small data files of an append table into larger ones',
  usage: {
    synopsis: ['compact <table> [--partition k=v]... [--where "<predicate>"] [--dry-run] [--json]'],
    positionals: [tableArgument],
    options: {
      partition: { type: 'multiple', valueName: 'k=v', description: 'only this partition (repeat the option for each key)' },
      where: { type: 'string', valueName: 'predicate', description: 'only partitions matching this predicate' },
      'dry-run': dryRunOption,
      json: jsonOption,
    },
  },
  async run(args) {
    parseKeyValues(args.options.partition, '--partition', 'compact');
    notYetImplemented('compact', 'compaction in @tidemark/maintenance');
  },
});
