/**
 * ORC read benchmark: rows per second of tidemark's ORC reader (@tidemark/orc through the
 * data-file reader of @tidemark/format) against tidemark's Parquet reader on the same data, for
 * all columns and for one column.
 *
 *   node benchmarks/orc.bench.mjs [--runs 3] [--datasets demo,seek]
 *
 * Data: files of the ORC project's examples in ../shared/fixtures/orc (not in the repo; the
 * benchmark reports itself skipped when they are absent). Each ORC file is converted once into a
 * zstd Parquet file with tidemark's Parquet writer (benchmarks/work/, gitignored), so both readers
 * decode exactly the same rows. Every measurement runs in a fresh process; runs are interleaved so
 * machine noise hits both readers alike. Imports the BUILT packages (run the build first).
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { medianRun, runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, fmtRate, markdownTable } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'orc';

const TASKS = new URL('./lib/orc-tasks.mjs', import.meta.url);
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'fixtures', 'orc');

/** Datasets: an ORC example file and the column read alone. */
const DATASETS = {
  demo: { file: 'demo-12-zlib.orc', oneColumn: '_col0', what: '1.9M rows, 9 flat int/string columns, zlib' },
  seek: { file: 'TestOrcFile.testSeek.orc', oneColumn: 'int1', what: '32k rows, 12 columns incl. binary, struct, list, map, zlib' },
};

/**
 * Runs the benchmark and returns the results and their markdown; writes nothing.
 *
 * @param {{ runs?: number, datasets?: string[], log?: (msg: string) => void }} [options]
 */
export async function run(options = {}) {
  const runs = options.runs ?? 3;
  const log = options.log ?? ((m) => console.error(m));
  const selected = options.datasets ?? Object.keys(DATASETS);
  const env = environment();
  const problems = [];
  const results = [];
  if (!existsSync(FIXTURES)) {
    const note = `skipped: the ORC example files (${FIXTURES}) are absent`;
    log(note);
    return { name, json: { environment: env, skipped: note }, markdown: `# ORC read benchmark\n\n${note}\n` };
  }
  for (const key of selected) {
    const dataset = DATASETS[key];
    if (!dataset) throw new Error(`unknown dataset '${key}' (use ${Object.keys(DATASETS).join(', ')})`);
    const orc = path.join(FIXTURES, dataset.file);
    const parquet = path.join(WORK_DIR, 'orc', dataset.file.replace(/\.orc$/, '.parquet'));
    if (!existsSync(parquet) || statSync(parquet).mtimeMs < statSync(orc).mtimeMs) {
      log(`${key}: writing the Parquet copy of ${dataset.file}`);
      await runChild(TASKS, 'prepare', { orc, parquet }, { timeoutMs: 600_000 });
    }
    for (const [columnsLabel, columns] of [
      ['all', undefined],
      [dataset.oneColumn, [dataset.oneColumn]],
    ]) {
      const all = { orc: [], parquet: [] };
      for (let i = 0; i < runs; i++) {
        for (const [format, task, file] of [
          ['orc', 'read-orc', orc],
          ['parquet', 'read-parquet', parquet],
        ]) {
          log(`${key} ${columnsLabel}: ${format} run ${i + 1}/${runs}`);
          try {
            all[format].push(await runChild(TASKS, task, { file, columns }, { timeoutMs: 600_000 }));
          } catch (e) {
            problems.push(`${key} ${columnsLabel} ${format}: ${String(e.message).slice(0, 500)}`);
          }
        }
      }
      const summary = { dataset: key, file: dataset.file, what: dataset.what, columns: columnsLabel };
      for (const format of ['orc', 'parquet']) {
        if (all[format].length === 0) continue;
        const m = medianRun(all[format], 'ms');
        summary[format] = {
          rows: m.rows,
          ms: m.ms,
          msRuns: all[format].map((r) => r.ms),
          rowsPerSec: (m.rows / m.ms) * 1000,
          peakRssMiB: m.peakRssMiB,
          fileBytes: statSync(format === 'orc' ? orc : parquet).size,
        };
      }
      if (summary.orc && summary.parquet && summary.orc.rows !== summary.parquet.rows) {
        problems.push(`${key} ${columnsLabel}: ORC read ${summary.orc.rows} rows, Parquet ${summary.parquet.rows}`);
      }
      results.push(summary);
    }
  }
  const json = {
    environment: env,
    note: 'machine shared with other agents (2 cores): compare ratios from the same run, not absolute figures across runs',
    runs,
    results,
    problems,
  };
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  const rows = json.results.map((r) => [
    r.dataset,
    r.columns,
    fmtInt(r.orc?.rows ?? r.parquet?.rows ?? 0),
    r.orc ? fmtRate(r.orc.rowsPerSec) : 'n/a',
    r.parquet ? fmtRate(r.parquet.rowsPerSec) : 'n/a',
    r.orc && r.parquet ? fmtNum(r.orc.rowsPerSec / r.parquet.rowsPerSec, 2) : 'n/a',
    r.orc ? fmtNum(r.orc.peakRssMiB, 0) : 'n/a',
    r.parquet ? fmtNum(r.parquet.peakRssMiB, 0) : 'n/a',
  ]);
  const datasets = [...new Map(json.results.map((r) => [r.dataset, r])).values()]
    .map(
      (r) =>
        `- \`${r.dataset}\`: \`${r.file}\` (${r.what}); ORC ${fmtInt(r.orc?.fileBytes ?? 0)} B, Parquet copy ${fmtInt(r.parquet?.fileBytes ?? 0)} B`,
    )
    .join('\n');
  return [
    '# ORC read benchmark',
    '',
    `Median of ${json.runs} fresh-process runs per cell (${json.environment.date}, ${json.environment.cpu}, ${json.environment.cores} cores, Node ${json.environment.node}).`,
    'The machine was shared with other agents while this ran: compare the ratio column, not absolute figures across runs.',
    '',
    markdownTable(
      ['dataset', 'columns', 'rows', 'ORC rows/s', 'Parquet rows/s', 'ORC ÷ Parquet', 'ORC peak RSS MiB', 'Parquet peak RSS MiB'],
      rows,
    ),
    '',
    "Both readers are tidemark's data-file readers (`readOrcFile`, `readParquetFile`), reading local files; the Parquet copy was written",
    "from the ORC rows by tidemark's Parquet writer (zstd, one row group per 1M rows).",
    '',
    datasets,
    ...(json.problems.length > 0 ? ['', '## Problems', '', ...json.problems.map((p) => `- ${p}`)] : []),
    '',
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--runs': 'runs', '--datasets': ['datasets', 'strings'] }, { s3: false });
