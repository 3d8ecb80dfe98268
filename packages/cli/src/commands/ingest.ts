import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { notYetImplemented, tableArgument } from './shared.js';

/** `tidemark ingest`: exactly-once ingestion of a JSON-lines source (issue 5). */
export const ingestCommand = defineCommand({
  name: 'ingest',
  summary: 'ingest a JSON-lines file exactly once, resumable after a crash',
  usage: {
    synopsis: ['ingest <table> --source <file.jsonl> --state <dir-or-uri> [--checkpoint-every N] [--parallelism P]'],
    description: 'Safe to kill at any moment; rerun with the same arguments until it reports the source done.',
    positionals: [tableArgument],
    options: {
      source: { type: 'string', valueName: 'file.jsonl', description: 'JSON-lines input' },
      state: { type: 'string', valueName: 'dir-or-uri', description: 'where checkpoints are kept' },
      'checkpoint-every': { type: 'integer', min: 1, valueName: 'N', description: 'records per checkpoint' },
      parallelism: { type: 'integer', min: 1, valueName: 'P', description: 'parallel writers' },
    },
  },
  async run(args) {
    if (args.options.source === undefined) throw new UsageError("option '--source' is required", 'ingest');
    if (args.options.state === undefined) throw new UsageError("option '--state' is required", 'ingest');
    notYetImplemented('ingest', 'the sink driver of @tidemark/sink');
  },
});
