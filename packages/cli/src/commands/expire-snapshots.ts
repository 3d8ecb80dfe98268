import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseOlderThan } from '../options/duration.js';
import { dryRunOption, jsonOption, notYetImplemented, tableArgument } from './shared.js';

/** `tidemark expire-snapshots` (issue 6). */
export const expireSnapshotsCommand = defineCommand({
  name: 'expire-snapshots',
  summary: 'expire old snapshots and delete the files only they use',
  usage: {
    synopsis: ['expire-snapshots <table> [--retain-min N] [--retain-max N] [--older-than <duration|timestamp>] [--dry-run] [--json]'],
    description: "Defaults come from the table options (snapshot.num-retained.min 10, snapshot.num-retained.max unlimited, snapshot.time-retained 1h). Durations: 90s, 30m, 1h, 1d, 7d.",
    positionals: [tableArgument],
    options: {
      'retain-min': { type: 'integer', min: 1, valueName: 'N', description: 'always keep at least N snapshots' },
      'retain-max': { type: 'integer', min: 1, valueName: 'N', description: 'keep at most N snapshots' },
      'older-than': { type: 'string', valueName: 'duration|timestamp', description: 'expire snapshots older than this' },
      'dry-run': dryRunOption,
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const { 'retain-min': min, 'retain-max': max, 'older-than': olderThan } = args.options;
    if (min !== undefined && max !== undefined && min > max) throw new UsageError(`'--retain-min' (${min}) cannot exceed '--retain-max' (${max})`, 'expire-snapshots');
    if (olderThan !== undefined) parseOlderThan(olderThan, '--older-than', ctx.now());
    notYetImplemented('expire-snapshots', 'snapshot expiration in @tidemark/maintenance');
  },
});
