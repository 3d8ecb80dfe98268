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

import { benchWarehouses } from './lib/bench-storage.mjs';
import { runChild } from './lib/measure.mjs';
import { environment, fmtInt, fmtNum, markdownTable, problemsSection } from './lib/report.mjs';
import { parseNumberArgs, runIfMain, s3FromEnv } from './lib/standalone.mjs';

export const name = 'pk-compact';

const TASKS = new URL('./lib/pk-compact-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;

/**
 * @param {{ log?: (msg: string) => void, s3?: object, runs?: number, rows?: number, s3Rows?: number }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const runs = options.runs ?? 5;
  const rows = options.rows ?? 200_000;
  const s3Rows = options.s3Rows ?? 100_000;
  const started = performance.now();
  const results = [];
  const problems = [];

  const backends = benchWarehouses(name, options.s3).map((b) => ({ ...b, rows: b.s3 ? s3Rows : rows }));

  for (const b of backends) {
    log(`${b.backend}: ${runs} runs of ${fmtInt(b.rows)} rows in one bucket`);
    const data = await runChild(TASKS, 'data', { warehouse: `${b.root}/wh`, runs, rows: b.rows, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    const before = await runChild(TASKS, 'read', { table: data.table, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    const raw = await runChild(TASKS, 'raw-rewrite', { files: data.files, target: `${b.root}/raw`, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    const c = await runChild(TASKS, 'compact', { table: data.table, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    const after = await runChild(TASKS, 'read', { table: data.table, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
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

  const json = {
    name,
    date: new Date().toISOString(),
    environment: environment(),
    runs,
    rows,
    s3Rows,
    results,
    problems,
    seconds: (performance.now() - started) / 1000,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : undefined,
  };
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    '# Primary-key compaction benchmark',
    '',
    `Run ${json.date}; total ${fmtNum(json.seconds)} s.`,
    '',
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
    json.s3
      ? `- s3 = Ceph RGW (memstore OSD) at ${json.s3.endpoint} on the same machine: loopback network, CPU shared with the client.`
      : '- S3 rows skipped: no S3 server configured.',
    '- Machine: 2 shared cores with other jobs running; treat single figures as ±30 %.',
    ...problemsSection(json.problems),
  ]
    .filter((l) => l !== null)
    .join('\n');
}

const ARGS = { '--runs': 'runs', '--rows': 'rows', '--s3-rows': 's3Rows' };

await runIfMain(import.meta.url, () => run({ ...parseNumberArgs(process.argv.slice(2), ARGS), s3: s3FromEnv() }));
