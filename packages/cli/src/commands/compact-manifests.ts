import { compactManifests } from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import { writeJsonSummary } from '../output/progress.js';
import { compactManifestsJson, compactManifestsText, runJob } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark compact-manifests`. */
export const compactManifestsCommand = defineCommand({
  name: 'compact-manifests',
  summary: 'merge all manifests of the latest snapshot into a compact set',
  usage: {
    synopsis: ['compact-manifests <table> [--dry-run] [--json]'],
    description: 'Commits a COMPACT snapshot whose manifests hold only the live files; the data is unchanged.',
    positionals: [tableArgument],
    options: {
      'dry-run': { ...dryRunOption, description: 'report how many manifests would be merged' },
      json: jsonOption,
      branch: branchOption,
    },
  },
  async run(args, ctx) {
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const summary = await runJob(ctx, () => compactManifests(table, { dryRun: args.options['dry-run'], signal: ctx.signal }));
      if (args.options.json) await writeJsonSummary(ctx.stdout, compactManifestsJson(table.location, summary), ctx.signal);
      else await printLine(ctx, compactManifestsText(summary));
    });
  },
});
