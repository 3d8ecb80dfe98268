import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseOlderThan } from '../options/duration.js';
import { dryRunOption, jsonOption, notYetImplemented, tableArgument } from './shared.js';

const ONE_HOUR_MS = 3_600_000;

/** `tidemark remove-orphan-files` (issue 6). */
export const removeOrphanFilesCommand = defineCommand({
  name: 'remove-orphan-files',
  summary: 'delete files under the table that no snapshot, tag or in-flight commit uses',
  usage: {
    synopsis: ['remove-orphan-files <table> [--older-than 1d] [--dry-run] [--json]'],
    description: 'Only files older than --older-than (default 1d) are deleted. A time in the future is refused; below 1 hour a warning is printed.',
    positionals: [tableArgument],
    options: {
      'older-than': { type: 'string', valueName: 'duration|timestamp', description: 'only delete files older than this (default 1d)' },
      'dry-run': { ...dryRunOption, description: 'list what would be deleted and its total size' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const now = ctx.now();
    const { cutoffMs } = parseOlderThan(args.options['older-than'] ?? '1d', '--older-than', now);
    if (cutoffMs > now) throw new UsageError(`option '--older-than' is in the future; orphan cleanup would delete files being written now`, 'remove-orphan-files');
    if (now - cutoffMs < ONE_HOUR_MS) ctx.stderr.write('tidemark: warning: --older-than is under 1 hour; files of writes in progress may be deleted\n');
    notYetImplemented('remove-orphan-files', 'orphan cleanup in @tidemark/maintenance');
  },
});
