/**
 * Inspect benchmark, on local disk: `inspectTable` (what `tidemark inspect` runs) on synthetic
 * append tables of 10k and 100k live files, once without the maintenance dry runs (the report's
 * own streaming aggregation: its memory must not grow with the file count) and once with them
 * (orphan listing, expiration and compaction planning, which hold what those jobs hold). Scan
 * planning of the same snapshot, which keeps every live file by design, is the reference.
 *
 *   node benchmarks/inspect.bench.mjs [--files 10000,100000] [--runs 2]
 *
 * Every measurement runs in a fresh child process (lib/inspect-tasks.mjs). The tables come from
 * lib/synthetic-table.mjs (cached under benchmarks/work/). Imports the BUILT packages.
 */
import path from 'node:path';

import { repeat, medianRun } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable, problemsSection } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { ensureSyntheticTable } from './lib/synthetic-table.mjs';

export const name = 'inspect';

const TASKS = new URL('./lib/inspect-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;
const ROWS_PER_FILE = 50;
const PARTITIONS = 10;

/**
 * @param {{ log?: (msg: string) => void, files?: number[], runs?: number }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const sizes = options.files ?? [10_000, 100_000];
  const runs = options.runs ?? 2;
  const started = performance.now();
  const rows = [];
  const problems = [];
  for (const liveFiles of sizes) {
    const meta = await ensureSyntheticTable(
      path.join(WORK_DIR, `read-append-${liveFiles >= 1000 ? `${liveFiles / 1000}k` : liveFiles}`),
      { liveFiles, rowsPerFile: ROWS_PER_FILE, partitions: PARTITIONS },
      log,
    );
    const opts = { timeoutMs: TIMEOUT_MS, nodeArgs: ['--expose-gc'] };
    for (const [what, task, args] of [
      ['report only (--skip-maintenance)', 'inspect', { root: meta.root, maintenance: false }],
      ['report + maintenance dry runs', 'inspect', { root: meta.root, maintenance: true }],
      ['scan planning (reference)', 'plan', { root: meta.root }],
    ]) {
      log(`${fmtInt(liveFiles)} files: ${what}, ${runs} runs`);
      const all = await repeat(runs, TASKS, task, args, opts);
      const m = medianRun(all, 'ms');
      if (m.files !== meta.liveFiles)
        problems.push(`${what} on ${liveFiles} files counted ${m.files} live files, expected ${meta.liveFiles}`);
      rows.push({
        liveFiles: meta.liveFiles,
        manifests: meta.manifests,
        what,
        ms: m.ms,
        msRuns: all.map((r) => r.ms),
        filesPerSec: (meta.liveFiles / m.ms) * 1000,
        peakRssMiB: m.peakRssMiB,
        rssGrowthMiB: m.peakRssMiB - m.baseRssMiB,
        orphansScanned: m.orphansScanned ?? null,
      });
    }
  }
  const json = { name, environment: environment(), durationMs: performance.now() - started, results: rows, problems };
  return { name, json, markdown: toMarkdown(json) };
}

function toMarkdown(json) {
  const env = json.environment;
  return [
    '# inspect',
    '',
    `${env.date} · Node ${env.node} · ${env.cpu} (${env.cores} cores, ${env.memoryGiB} GiB) · ${env.platform}`,
    '',
    '`inspectTable` on synthetic append tables (10 partitions, 50 rows per file, 9 snapshots), local disk. Median of the runs.',
    '',
    markdownTable(
      ['live files', 'manifests', 'what', 'time (ms)', 'files/s', 'peak RSS (MiB)', 'RSS growth (MiB)'],
      json.results.map((r) => [
        fmtInt(r.liveFiles),
        fmtInt(r.manifests),
        r.what,
        fmtInt(r.ms),
        fmtInt(r.filesPerSec),
        fmtNum(r.peakRssMiB),
        fmtNum(r.rssGrowthMiB),
      ]),
    ),
    '',
    '- RSS growth = peak RSS minus the RSS after imports and opening the table (a fresh process per run).',
    "- 'report only' streams the manifests twice and keeps sums per partition and bucket; the dry runs",
    '  hold what the jobs hold (compaction planning keeps the scan plan of every live file).',
    '- Machine: 2 shared cores with other jobs running (other agents, tests, S3 servers); treat single figures as ±30 %.',
    ...problemsSection(json.problems),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--files': ['files', 'numbers'], '--runs': 'runs' }, { s3: false });
