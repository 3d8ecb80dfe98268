/**
 * Primary-key compaction benchmark, on local disk and on the S3 server:
 * - full compaction (compactPrimaryKeyTable) of one bucket holding `runs` overlapping level-0
 *   sorted runs: MB/s of input, against a raw read + rewrite of the same Parquet files with
 *   parquet-wasm (readParquet + writeParquet, zstd) and no table logic;
 * - read time of that bucket (merge-on-read of every run) before and after the full compaction.
 *
 *   node benchmarks/pk-compact.bench.mjs [--runs 5] [--rows 200000] [--s3-rows 100000]
 *
 * Every measurement runs in a fresh child process (lib/pk-compact-tasks.mjs). Imports the BUILT
 * packages.
 */
import { rm } from 'node:fs/promises';

import { benchBackends } from './lib/bench-storage.mjs';
import { taskRunner } from './lib/measure.mjs';
import { closingNotes, fmtInt, fmtNum, markdownTable, resultHeading, resultJson } from './lib/report.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'pk-compact';

const TASKS = new URL('./lib/pk-compact-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;

/**
 * @param {{ log?: (msg: string) => void, s3?: object, runs?: number, rows?: number, s3Rows?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, runs, rows, s3Rows } = runSettings(options, { runs: 5, rows: 200_000, s3Rows: 100_000 });
  const results = [];
  const problems = [];

  for (const b of benchBackends(name, options.s3, (b) => ({ rows: b.s3 ? s3Rows : rows }))) {
    const task = taskRunner(TASKS, b, TIMEOUT_MS);
    log(`${b.backend}: ${runs} runs of ${fmtInt(b.rows)} rows in one bucket`);
    const data = await task('data', { warehouse: `${b.root}/wh`, runs, rows: b.rows });
    const before = await task('read', { table: data.table });
    const raw = await task('raw-rewrite', { files: data.files, target: `${b.root}/raw` });
    const c = await task('compact', { table: data.table });
    const after = await task('read', { table: data.table });
    if (after.rows !== before.rows) problems.push(`${b.backend}: read ${before.rows} rows before and ${after.rows} after compaction`);
    const mb = (n) => n / 1e6;
    results.push({
      backend: b.backend,
      runsBefore: before.runs,
      runsAfter: after.runs,
      rowsInput: c.rows,
      rowsRead: after.rows,
      filesBefore: c.filesBefore,
      filesAfter: c.filesAfter,
      inputMB: mb(c.bytesRead),
      outputMB: mb(c.bytesWritten),
      compactSeconds: c.ms / 1000,
      compactMBps: mb(c.bytesRead) / (c.ms / 1000),
      compactRowsPerSec: c.rows / (c.ms / 1000),
      rawMBps: mb(raw.bytesRead) / (raw.ms / 1000),
      rawSeconds: raw.ms / 1000,
      readBeforeSeconds: before.ms / 1000,
      readAfterSeconds: after.ms / 1000,
      compactPeakRssMiB: c.peakRssMiB,
      rawPeakRssMiB: raw.peakRssMiB,
      readBeforePeakRssMiB: before.peakRssMiB,
      readAfterPeakRssMiB: after.peakRssMiB,
    });
    log(
      `${b.backend}: compaction ${fmtNum(mb(c.bytesRead) / (c.ms / 1000))} MB/s (raw ${fmtNum(mb(raw.bytesRead) / (raw.ms / 1000))}); read ${fmtNum(before.ms / 1000, 2)} s -> ${fmtNum(after.ms / 1000, 2)} s`,
    );
    if (!b.s3) await rm(b.root, { recursive: true, force: true });
  }

  const json = resultJson(name, options, started, { runs, rows, s3Rows, results, problems });
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    ...resultHeading('Primary-key compaction benchmark', json),
    `## Full compaction of one bucket with ${json.runs} overlapping level-0 sorted runs vs raw parquet-wasm read + rewrite of the same files`,
    '',
    markdownTable(
      [
        'backend',
        'input rows',
        'input files',
        'output files',
        'input MB',
        'output MB',
        'compaction MB/s',
        'compaction rows/s',
        'raw read+write MB/s',
        'compaction peak RSS MiB',
        'raw peak RSS MiB',
      ],
      json.results.map((r) => [
        r.backend,
        fmtInt(r.rowsInput),
        fmtInt(r.filesBefore),
        fmtInt(r.filesAfter),
        fmtNum(r.inputMB),
        fmtNum(r.outputMB),
        fmtNum(r.compactMBps),
        fmtInt(r.compactRowsPerSec),
        fmtNum(r.rawMBps),
        fmtNum(r.compactPeakRssMiB),
        fmtNum(r.rawPeakRssMiB),
      ]),
    ),
    '',
    '## Reading the bucket (merge-on-read) before and after the full compaction',
    '',
    markdownTable(
      [
        'backend',
        'rows read',
        'sorted runs before',
        'read s before',
        'peak RSS MiB before',
        'sorted runs after',
        'read s after',
        'peak RSS MiB after',
      ],
      json.results.map((r) => [
        r.backend,
        fmtInt(r.rowsRead),
        fmtInt(r.runsBefore),
        fmtNum(r.readBeforeSeconds, 2),
        fmtNum(r.readBeforePeakRssMiB),
        fmtInt(r.runsAfter),
        fmtNum(r.readAfterSeconds, 2),
        fmtNum(r.readAfterPeakRssMiB),
      ]),
    ),
    '',
    '## Notes',
    '',
    `- Data: ${json.runs} level-0 files of ${fmtInt(json.rows)} rows locally${json.s3 ? ` (${fmtInt(json.s3Rows)} on S3)` : ''}, written directly in the key-value layout; keys drawn from twice the row count, so runs overlap and later runs update keys of earlier ones; 5 % of the records of later runs are deletes.`,
    '- Compaction merges the runs by key and sequence number through the merge engine (deduplicate), drops deletes (output is the top level) and writes the survivors; the raw rewrite only decodes and re-encodes each file.',
    ...closingNotes(json),
  ]
    .filter((l) => l !== null)
    .join('\n');
}

await runStandalone(import.meta.url, run, { '--runs': 'runs', '--rows': 'rows', '--s3-rows': 's3Rows' });
