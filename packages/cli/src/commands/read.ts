import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { OUTPUT_FORMATS } from '../output/writers.js';
import { notYetImplemented, snapshotOption, tableArgument } from './shared.js';

/** `tidemark read`: print rows of a snapshot, timestamp or tag (issue 3). */
export const readCommand = defineCommand({
  name: 'read',
  summary: 'print the rows of a table (latest, or a snapshot, timestamp or tag)',
  usage: {
    synopsis: ['read <table> [--snapshot N | --timestamp T | --tag NAME] [--columns a,b] [--where "<predicate>"] [--limit N] [--format jsonl|csv|table]'],
    description:
      'jsonl prints one JSON object per row with the columns in schema order: BIGINT as a number within ±(2^53-1), ' +
      'else a string; DECIMAL as a string with exactly `scale` fraction digits; DATE as YYYY-MM-DD; TIMESTAMP(p) as ' +
      'YYYY-MM-DDTHH:MM:SS plus p fraction digits (TIMESTAMP_LTZ with a trailing Z); BYTES as base64; MAP as an ' +
      'object when its keys are strings, else an array of [key, value] pairs.',
    positionals: [tableArgument],
    options: {
      snapshot: { ...snapshotOption, description: 'read this snapshot id' },
      timestamp: { type: 'string', valueName: 'T', description: 'read the latest snapshot at or before T (ISO-8601 or epoch ms)' },
      tag: { type: 'string', valueName: 'NAME', description: 'read the snapshot of this tag' },
      columns: { type: 'list', valueName: 'a,b', description: 'only these columns, in this order' },
      where: { type: 'string', valueName: 'predicate', description: 'filter, e.g. "dt = \'2024-05-01\' AND id > 10"' },
      limit: { type: 'integer', min: 0, valueName: 'N', description: 'print at most N rows' },
      format: { type: 'string', valueName: 'fmt', choices: OUTPUT_FORMATS, description: 'output format (default jsonl)' },
    },
    conflicts: [['snapshot', 'timestamp', 'tag']],
  },
  async run(args) {
    if (args.options.timestamp !== undefined) parseInstant(args.options.timestamp, '--timestamp');
    if (args.options.where !== undefined && args.options.where.trim() === '') throw new UsageError("option '--where' is empty", 'read');
    notYetImplemented('read', 'the table reader of @tidemark/core');
  },
});
