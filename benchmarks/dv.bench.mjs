/**
 * Deletion-vector benchmark, on local disk (and on the S3 server when configured, smaller):
 * - batch writes into a primary-key table with `deletion-vectors.enabled` against the same writes
 *   without it (ratio): DV writes compact level 0 up and mark replaced rows before each commit
 *   completes, plain writes compact only when universal compaction says so;
 * - reading a DV table whose buckets hold 5 sorted runs (levels >= 1 read as they are, deleted
 *   rows skipped) against merge-on-read of the same data in 5 level-0 runs (`write-only`).
 *
 *   node benchmarks/dv.bench.mjs [--commits 5] [--rows 40000] [--s3-rows 10000]
 *
 * Every measurement runs in a fresh child process (lib/dv-tasks.mjs). Imports the BUILT packages.
 */
import { rm } from 'node:fs/promises';

import { benchBackends } from './lib/bench-storage.mjs';
import { taskRunner } from './lib/measure.mjs';
import { closingNotes, fmtInt, fmtNum, markdownTable, resultHeading, resultJson } from './lib/report.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'dv';

const TASKS = new URL('./lib/dv-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;

/**
 * @param {{ log?: (msg: string) => void, s3?: object, commits?: number, rows?: number, s3Rows?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, commits, rows, s3Rows } = runSettings(options, { commits: 5, rows: 40_000, s3Rows: 10_000 });
  const writes = [];
  const reads = [];
  const problems = [];

  for (const b of benchBackends(name, options.s3, (b) => ({ rows: b.s3 ? s3Rows : rows }))) {
    const task = taskRunner(TASKS, b, TIMEOUT_MS);
    log(`${b.backend}: ${commits} batch writes of ${fmtInt(b.rows)} rows, with and without deletion vectors`);
    const plain = await task('write', { warehouse: `${b.root}/plain`, dv: false, commits, rows: b.rows });
    const dv = await task('write', { warehouse: `${b.root}/dv`, dv: true, commits, rows: b.rows });
    writes.push({
      backend: b.backend,
      rows: commits * b.rows,
      plainSeconds: plain.ms / 1000,
      dvSeconds: dv.ms / 1000,
      plainRowsPerSec: plain.rows / (plain.ms / 1000),
      dvRowsPerSec: dv.rows / (dv.ms / 1000),
      ratio: dv.ms / plain.ms,
      plainPeakRssMiB: plain.peakRssMiB,
      dvPeakRssMiB: dv.peakRssMiB,
    });
    log(`${b.backend}: plain ${fmtNum(plain.ms / 1000, 2)} s, DV ${fmtNum(dv.ms / 1000, 2)} s (x${fmtNum(dv.ms / plain.ms, 2)})`);

    log(`${b.backend}: ${commits} sorted runs per bucket, DV read vs merge-on-read`);
    const dvRuns = await task('write', { warehouse: `${b.root}/dv-runs`, dv: true, commits, rows: b.rows, runs: true });
    const morRuns = await task('write', { warehouse: `${b.root}/mor-runs`, dv: false, writeOnly: true, commits, rows: b.rows, runs: true });
    const dvRead = await task('read', { table: dvRuns.table });
    const morRead = await task('read', { table: morRuns.table });
    if (dvRead.rows !== morRead.rows) problems.push(`${b.backend}: DV read ${dvRead.rows} rows, merge-on-read ${morRead.rows}`);
    reads.push({
      backend: b.backend,
      rows: dvRead.rows,
      dvRuns: dvRuns.runsPerBucket,
      morRuns: morRuns.runsPerBucket,
      filesWithVectors: dvRuns.filesWithVectors,
      dvSeconds: dvRead.ms / 1000,
      morSeconds: morRead.ms / 1000,
      speedup: morRead.ms / dvRead.ms,
      dvPeakRssMiB: dvRead.peakRssMiB,
      morPeakRssMiB: morRead.peakRssMiB,
    });
    log(`${b.backend}: DV read ${fmtNum(dvRead.ms / 1000, 2)} s, merge-on-read ${fmtNum(morRead.ms / 1000, 2)} s`);
    if (!b.s3) await rm(b.root, { recursive: true, force: true });
  }

  const json = resultJson(name, options, started, {
    machine: 'shared: 2 cores used by several agents at once; figures are indicative (±30 %)',
    commits,
    rows,
    s3Rows,
    writes,
    reads,
    problems,
  });
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    ...resultHeading('Deletion-vector benchmark', json),
    `## ${json.commits} batch writes into a primary-key table with deletion vectors vs without`,
    '',
    markdownTable(
      [
        'backend',
        'rows',
        'without DV s',
        'with DV s',
        'without DV rows/s',
        'with DV rows/s',
        'DV / plain time',
        'peak RSS MiB (plain / DV)',
      ],
      json.writes.map((r) => [
        r.backend,
        fmtInt(r.rows),
        fmtNum(r.plainSeconds, 2),
        fmtNum(r.dvSeconds, 2),
        fmtInt(r.plainRowsPerSec),
        fmtInt(r.dvRowsPerSec),
        fmtNum(r.ratio, 2),
        `${fmtNum(r.plainPeakRssMiB)} / ${fmtNum(r.dvPeakRssMiB)}`,
      ]),
    ),
    '',
    '## Reading the same data: DV table with sorted runs in levels >= 1 vs merge-on-read of level-0 runs',
    '',
    markdownTable(
      [
        'backend',
        'rows',
        'runs per bucket (DV / MOR)',
        'files with vectors',
        'DV read s',
        'merge-on-read s',
        'MOR / DV time',
        'peak RSS MiB (DV / MOR)',
      ],
      json.reads.map((r) => [
        r.backend,
        fmtInt(r.rows),
        `${r.dvRuns.join(',')} / ${r.morRuns.join(',')}`,
        fmtInt(r.filesWithVectors),
        fmtNum(r.dvSeconds, 2),
        fmtNum(r.morSeconds, 2),
        fmtNum(r.speedup, 2),
        `${fmtNum(r.dvPeakRssMiB)} / ${fmtNum(r.morPeakRssMiB)}`,
      ]),
    ),
    '',
    '## Notes',
    '',
    '- Writes: each batch write is 30 % updates of earlier keys; 2 buckets. With DVs, every write compacts its level-0 files up before it completes (lookup of each key in the higher levels, replaced rows marked in deletion vectors); without, writers compact by universal compaction only.',
    '- Reads: writes of halving size (the first one `rows` rows), so that size-ratio compaction keeps each in its own run; the DV table keeps one sorted run per write in levels >= 1 (compaction trigger raised), read without merging; the merge-on-read table is `write-only` with the same writes in level 0, merged by key at read time.',
    ...closingNotes(json, '- The machine was shared with other jobs while this ran; treat single figures as ±30 %.'),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--commits': 'commits', '--rows': 'rows', '--s3-rows': 's3Rows' });
