import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { PhaseProgress } from './maintenance-shared.js';
import { dryRunOption, jsonOption, printLine, quietOption, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark rollback --to <snapshot-id|tag>`. */
export const rollbackCommand = defineCommand({
  name: 'rollback',
  summary: 'roll the table back to a snapshot or a tag',
  usage: {
    synopsis: ['rollback <table> --to <snapshot-id|tag> [--force] [--dry-run] [--quiet] [--json]'],
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      to: { type: 'string', valueName: 'snapshot-id|tag', description: 'target snapshot id (digits) or tag name' },
      force: { type: 'boolean', description: 'roll back even though a tag points at a later snapshot' },
      'dry-run': { ...dryRunOption, description: 'report the snapshots, tags and files the rollback would remove, removing none' },
      quiet: quietOption,
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const to = args.options.to;
    if (to === undefined) throw new UsageError("option '--to' is required", 'rollback');
    // Tag names cannot be purely numeric (Paimon's rule), so digits always mean a snapshot id.
    const target = /^\d+$/.test(to) ? Number(to) : to;
    if (typeof target === 'number' && !Number.isSafeInteger(target))
      throw new UsageError(`option '--to' is not a valid snapshot id: ${to}`, 'rollback');
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const progress = new PhaseProgress(ctx, 'rolling back', { snapshots: 'snapshots', manifests: 'snapshots read' });
      const silent = args.options.quiet || args.options.json;
      const r = await table
        .rollbackTo(target, {
          force: args.options.force,
          dryRun: args.options['dry-run'],
          ...(silent ? {} : { onProgress: progress.onProgress }),
        })
        .finally(() => progress.finish());
      if (args.options.json) {
        await printLine(ctx, JSON.stringify({ command: 'rollback', table: table.location, ...r }));
        return;
      }
      // A dry run speaks in the conditional so that its output is never mistaken for a done rollback.
      const [rolled, remove, del] = r.dryRun ? ['would roll back', 'would remove', 'would delete'] : ['rolled back', 'removed', 'deleted'];
      const removed =
        r.removedSnapshots.length === 0
          ? 'no later snapshots'
          : `${remove} snapshot${r.removedSnapshots.length === 1 ? '' : 's'} ${[...r.removedSnapshots].reverse().join(', ')}`;
      await printLine(ctx, `${rolled} to snapshot ${r.snapshotId}: ${removed}`);
      if (r.removedTags.length > 0) await printLine(ctx, `  ${remove} tag(s) ${r.removedTags.map((t) => `'${t}'`).join(', ')}`);
      if (r.movedConsumers.length > 0)
        await printLine(
          ctx,
          `  ${r.dryRun ? 'would move' : 'moved'} consumer(s) ${r.movedConsumers.map((c) => `'${c}'`).join(', ')} back to snapshot ${r.snapshotId + 1}`,
        );
      if (r.removedChangelogs.length > 0)
        await printLine(ctx, `  ${remove} long-lived changelog(s) ${[...r.removedChangelogs].reverse().join(', ')}`);
      await printLine(ctx, `  ${del} ${r.deletedDataFiles} data file(s) and ${r.deletedManifests} manifest file(s)`);
    });
  },
});
