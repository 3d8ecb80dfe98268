import { writeFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectTable, type InspectPhase } from '@tidemark/maintenance';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { ReportFileError, UsageError } from '../errors.js';
import { parseOlderThan } from '../options/duration.js';
import { writeJsonSummary, type ProgressReporter } from '../output/progress.js';
import { writeText } from '../output/writers.js';
import { renderInspectHtml } from './inspect-html.js';
import { renderInspectText } from './inspect-text.js';
import { runJob } from './maintenance-shared.js';
import { branchOption, progressFor, tableArgument, withTable } from './shared.js';

const PHASES: readonly InspectPhase[] = ['timeline', 'files', 'expire', 'orphans', 'compaction', 'manifests'];

/** `tidemark inspect`: a picture of a table's health, on the terminal, as JSON or as an HTML page. */
export const inspectCommand = defineCommand({
  name: 'inspect',
  summary: 'a picture of a table: snapshot timeline, file sizes, partitions, buckets, manifests, what maintenance would do',
  usage: {
    synopsis: ['inspect <table> [--html <file>] [--json] [--older-than 1d] [--timeline N] [--partitions N] [--skip-maintenance]'],
    description:
      'Reads the table (never writes): the newest snapshots with rows added and removed, data-file sizes against target-file-size ' +
      'per partition, the largest partitions, bucket skew, the manifests, and the dry runs of expire-snapshots (table options), ' +
      'remove-orphan-files (--older-than), compact and compact-manifests. Prints a summary with bars and sparklines (colour on a ' +
      'terminal only); --json prints the report object instead; --html writes one self-contained HTML page with SVG charts.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      html: { type: 'string', valueName: 'file', description: 'also write the report as a self-contained HTML page to this file' },
      json: { type: 'boolean', description: 'print the report as one JSON object instead of the summary' },
      'older-than': {
        type: 'string',
        valueName: 'duration|timestamp',
        description: 'count files older than this as orphans (default 1d, as remove-orphan-files)',
      },
      timeline: { type: 'integer', min: 1, valueName: 'N', description: 'show at most the newest N snapshots (default 500)' },
      partitions: { type: 'integer', min: 1, valueName: 'N', description: 'list the N largest and N most skewed partitions (default 10)' },
      'skip-maintenance': {
        type: 'boolean',
        description: 'skip the maintenance dry runs (orphan cleanup lists every object under the table)',
      },
    },
    conflicts: [['skip-maintenance', 'older-than']],
  },
  async run(args, ctx) {
    const now = ctx.now();
    let orphanOlderThanMs: number | undefined;
    if (args.options['older-than'] !== undefined) {
      orphanOlderThanMs = parseOlderThan(args.options['older-than'], '--older-than', now).cutoffMs;
      if (orphanOlderThanMs > now) throw new UsageError("option '--older-than' is in the future", 'inspect');
    }
    const htmlFile = args.options.html !== undefined ? reportPath(args.options.html, ctx) : undefined;
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const progress = new InspectProgress(ctx);
      const report = await runJob(ctx, () =>
        inspectTable(table, {
          now: () => now,
          signal: ctx.signal,
          onProgress: progress.onProgress,
          maintenance: !args.options['skip-maintenance'],
          ...(orphanOlderThanMs !== undefined ? { orphanOlderThanMs } : {}),
          ...(args.options.timeline !== undefined ? { timelineLimit: args.options.timeline } : {}),
          ...(args.options.partitions !== undefined
            ? { largestPartitions: args.options.partitions, skewedPartitions: args.options.partitions }
            : {}),
        }),
      ).finally(() => progress.finish());
      if (htmlFile !== undefined) {
        try {
          await writeFile(htmlFile, renderInspectHtml(report));
        } catch (e) {
          throw new ReportFileError(`cannot write the HTML report to ${htmlFile}: ${(e as Error).message}`, { cause: e });
        }
      }
      if (args.options.json) {
        await writeJsonSummary(ctx.stdout, report as unknown as Record<string, unknown>, ctx.signal);
        return;
      }
      const colour = (ctx.stdout as { isTTY?: boolean }).isTTY === true && ctx.env['NO_COLOR'] === undefined;
      await writeText(ctx.stdout, renderInspectText(report, colour), ctx.signal);
      if (htmlFile !== undefined) ctx.stderr.write(`tidemark: wrote the HTML report to ${htmlFile}\n`);
    });
  },
});

/** The `--html` file as a local path: a relative path is taken from the working directory, `file://` URLs are accepted. */
function reportPath(arg: string, ctx: CommandContext): string {
  if (/^file:\/\//i.test(arg)) return fileURLToPath(arg);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) {
    throw new UsageError(
      `option '--html' takes a local file path, got '${arg}'; write it locally and copy it where it should go`,
      'inspect',
    );
  }
  return resolvePath(ctx.cwd, arg);
}

/** One progress line per step on a terminal's stderr: `inspecting: orphans [###---] 4/6 steps`. */
class InspectProgress {
  private bar: ProgressReporter | undefined;

  constructor(private readonly ctx: CommandContext) {}

  readonly onProgress = (phase: InspectPhase): void => {
    this.bar?.finish();
    this.bar = progressFor(this.ctx, `inspecting: ${phase}`, 'steps', PHASES.length);
    this.bar.add(PHASES.indexOf(phase));
  };

  finish(): void {
    this.bar?.finish();
  }
}
