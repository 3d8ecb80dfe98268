import { defineCommand } from '../command.js';
import { jsonOption, notYetImplemented, snapshotOption, tableArgument } from './shared.js';

/** `tidemark files`: list live data files (issue 3). */
export const filesCommand = defineCommand({
  name: 'files',
  summary: 'list the live data files with partition, bucket, level, rows and size',
  usage: {
    synopsis: ['files <table> [--snapshot N] [--json]'],
    positionals: [tableArgument],
    options: { snapshot: { ...snapshotOption, description: 'list the files of this snapshot (default latest)' }, json: { ...jsonOption, description: 'print JSON lines, one file per line' } },
  },
  async run() {
    notYetImplemented('files', 'scan planning in @tidemark/core');
  },
});
