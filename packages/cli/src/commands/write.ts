import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseKeyValues } from './create.js';
import { notYetImplemented, tableArgument } from './shared.js';

/** `tidemark write`: append or overwrite rows (issue 4). */
export const writeCommand = defineCommand({
  name: 'write',
  summary: 'write rows from a file or stdin and commit them as one snapshot',
  usage: {
    synopsis: ['write <table> [--input <file> | -] [--format jsonl|csv|parquet] [--overwrite [--partition k=v]...] [--commit-user U --commit-identifier N]'],
    description: 'JSON lines input uses the value formats `tidemark read --format jsonl` prints. Prints the new snapshot id, or that the identifier was already committed by that user.',
    positionals: [tableArgument],
    options: {
      input: { type: 'string', valueName: 'file|-', description: 'input file, or - for stdin (default -)' },
      format: { type: 'string', valueName: 'fmt', choices: ['jsonl', 'csv', 'parquet'], description: 'input format (default jsonl)' },
      overwrite: { type: 'boolean', description: 'replace the partitions written (or the given --partition)' },
      partition: { type: 'multiple', valueName: 'k=v', description: 'static partition to overwrite' },
      'commit-user': { type: 'string', valueName: 'U', description: 'commit user, for idempotent retries' },
      'commit-identifier': { type: 'integer', min: 0, valueName: 'N', description: 'commit identifier; skipped if U already committed it' },
    },
    requires: { partition: 'overwrite', 'commit-identifier': 'commit-user', 'commit-user': 'commit-identifier' },
  },
  async run(args) {
    parseKeyValues(args.options.partition, '--partition', 'write');
    if (args.options.format === 'parquet' && (args.options.input ?? '-') === '-') throw new UsageError("'--format parquet' needs '--input <file>'", 'write');
    notYetImplemented('write', 'the table writer and commit of @tidemark/core');
  },
});
