import { verifyTable, type VerifySummary } from '@tidemark/maintenance';
import { ExitCode, defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { writeJsonSummary, type ProgressReporter } from '../output/progress.js';
import { branchOption, jsonOption, printLine, progressFor, snapshotOption, tableArgument, withTable } from './shared.js';

/** `tidemark verify`: a read-only consistency check of a table. */
export const verifyCommand = defineCommand({
  name: 'verify',
  summary: 'check that every file a snapshot references exists, has its size and decodes (changes nothing)',
  usage: {
    synopsis: ['verify <table> [--snapshot N | --all] [--metadata-only] [--json]'],
    description:
      'Checks the snapshot chain and hints, the manifest lists and manifests, and every live data file: present with the recorded size, ' +
      'decodable, with the recorded row count and values within the recorded statistics. Prints one line per problem and exits 1 when ' +
      'there is any, 0 when the table is intact. Never writes or deletes anything.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      snapshot: { ...snapshotOption, description: 'check this snapshot (default: the latest)' },
      all: { type: 'boolean', description: 'check every retained snapshot' },
      'metadata-only': { type: 'boolean', description: 'check data files by existence and size only, without decoding them' },
      json: jsonOption,
    },
  },
  async run(args, ctx) {
    const o = args.options;
    if (o.all && o.snapshot !== undefined) throw new UsageError("give either '--snapshot' or '--all', not both", 'verify');
    return withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      // Decoding every live data file can take long on a big table: a bar on a terminal, as the maintenance jobs draw.
      let bar: ProgressReporter | undefined;
      const summary = await verifyTable(table, {
        ...(o.snapshot !== undefined ? { snapshotId: o.snapshot } : {}),
        all: o.all === true,
        metadataOnly: o['metadata-only'] === true,
        signal: ctx.signal,
        onProgress: (_done, total) => {
          bar ??= progressFor(ctx, 'verifying', 'files', total);
          bar.add(1);
        },
      }).finally(() => bar?.finish());
      if (o.json) await writeJsonSummary(ctx.stdout, { command: 'verify', ...summary }, ctx.signal);
      else await printLine(ctx, verifyText(summary));
      return summary.ok ? ExitCode.Ok : ExitCode.Failed;
    });
  },
});

/** Problems one per line, then the totals. */
export function verifyText(s: VerifySummary): string {
  const lines = s.problems.map((p) => `problem: ${p.path}${p.snapshotId !== null ? ` (snapshot ${p.snapshotId})` : ''}: ${p.problem}`);
  const scope = s.snapshotsChecked.length === 1 ? `snapshot ${s.snapshotsChecked[0]}` : `${s.snapshotsChecked.length} snapshots`;
  lines.push(
    `${s.ok ? 'ok' : `${s.problems.length} problem(s)`}: checked ${scope}, ${s.manifestsChecked} manifest(s), ${s.dataFilesChecked} data file(s), ${s.rowsChecked} row(s)`,
  );
  return lines.join('\n');
}
