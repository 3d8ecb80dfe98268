import { defineCommand } from '../command.js';
import { jsonOption, notYetImplemented, tableArgument } from './shared.js';

/** `tidemark compact-manifests` (issue 6). */
export const compactManifestsCommand = defineCommand({
  name: 'compact-manifests',
  summary: 'merge all manifests of the latest snapshot into a compact set',
  usage: { synopsis: ['compact-manifests <table> [--json]'], positionals: [tableArgument], options: { json: jsonOption } },
  async run() {
    notYetImplemented('compact-manifests', 'manifest compaction in @tidemark/maintenance');
  },
});
