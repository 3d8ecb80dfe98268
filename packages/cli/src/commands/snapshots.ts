import { defineCommand } from '../command.js';
import { jsonOption, notYetImplemented, tableArgument } from './shared.js';

/** `tidemark snapshots`: list snapshots (issue 3). */
export const snapshotsCommand = defineCommand({
  name: 'snapshots',
  summary: 'list snapshots: id, time, kind, commit user and identifier, record counts',
  usage: { synopsis: ['snapshots <table> [--json]'], positionals: [tableArgument], options: { json: { ...jsonOption, description: 'print JSON lines, one snapshot per line' } } },
  async run() {
    notYetImplemented('snapshots', 'snapshot listing in @tidemark/core');
  },
});
