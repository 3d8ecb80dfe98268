/**
 * Commit benchmark: latency of small appends committed one after another (p50/p99), and
 * commits/s with 4 concurrent writer processes on one table, on local disk and on the S3 server,
 * with peak RSS (tasks in lib/commit-tasks.mjs; each writer is a fresh child process).
 *
 *   node benchmarks/commit.bench.mjs [--commits 200] [--rows 100] [--writers 4] [--writer-commits 25]
 *
 * S3 rows need S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET (the harness
 * `npm run bench` starts or reuses the test server and passes them in). Results go to
 * benchmarks/results/commit.json and commit.md. Imports the BUILT packages.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable, problemsSection } from './lib/report.mjs';
import { runIfMain, s3FromEnv } from './lib/standalone.mjs';

export const name = 'commit';

const TASKS = new URL('./lib/commit-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 600_000;
const WARMUP = 5;

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function dist(values) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return {
    n: values.length,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: Math.max(...values),
    mean,
  };
}

/**
 * @param {{ log?: (msg: string) => void, s3?: object, commits?: number, rows?: number, writers?: number, writerCommits?: number }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const commits = options.commits ?? 200;
  const rows = options.rows ?? 100;
  const writers = options.writers ?? 4;
  const writerCommits = options.writerCommits ?? 25;
  const started = performance.now();
  const backends = [{ backend: 'local', warehouse: path.join(WORK_DIR, `commit-${process.pid}`), s3: undefined }];
  if (options.s3) {
    backends.push({ backend: 's3 (RGW)', warehouse: `s3://${options.s3.bucket}/bench/commit-${Date.now().toString(36)}`, s3: options.s3 });
  }
  const serial = [];
  const concurrent = [];
  const problems = [];

  for (const b of backends) {
    // --- serial small appends --------------------------------------------------------------
    const wh1 = `${b.warehouse}/serial`;
    log(`${b.backend}: ${commits} serial appends of ${rows} rows (after ${WARMUP} warm-up appends)`);
    await runChild(TASKS, 'create', { warehouse: wh1, s3: b.s3 });
    const r = await runChild(TASKS, 'commits', { warehouse: wh1, s3: b.s3, commits, rows, warmup: WARMUP }, { timeoutMs: TIMEOUT_MS });
    const total = r.writeMs.map((w, i) => w + r.commitMs[i]);
    const q = Math.max(1, Math.floor(commits / 4));
    serial.push({
      backend: b.backend,
      commits,
      rowsPerCommit: rows,
      commit: dist(r.commitMs),
      write: dist(r.writeMs),
      append: dist(total),
      commitsPerSec: (commits / r.ms) * 1000,
      firstQuarterCommitP50: percentile(r.commitMs.slice(0, q), 50),
      lastQuarterCommitP50: percentile(r.commitMs.slice(-q), 50),
      firstQuarterWriteP50: percentile(r.writeMs.slice(0, q), 50),
      lastQuarterWriteP50: percentile(r.writeMs.slice(-q), 50),
      readsPerCommitFirst: r.readsPerCommit.slice(0, 10),
      readsPerCommitLast: r.readsPerCommit.slice(-10),
      opsPerCommit: Object.fromEntries(Object.entries(r.ops).map(([k, v]) => [k, v / commits])),
      peakRssMiB: r.peakRssMiB,
      commitMs: r.commitMs,
      writeMs: r.writeMs,
    });

    // --- concurrent writers ----------------------------------------------------------------
    const wh2 = `${b.warehouse}/concurrent`;
    log(`${b.backend}: ${writers} writer processes × ${writerCommits} appends of ${rows} rows`);
    await runChild(TASKS, 'create', { warehouse: wh2, s3: b.s3 });
    const startAt = Date.now() + 5000;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        runChild(
          TASKS,
          'commits',
          { warehouse: wh2, s3: b.s3, commits: writerCommits, rows, writerId: w, startAt },
          { timeoutMs: TIMEOUT_MS },
        ),
      ),
    );
    const check = await runChild(TASKS, 'check', { warehouse: wh2, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    const expectedCommits = writers * writerCommits;
    if (
      check.latestId !== expectedCommits ||
      check.missingSnapshots !== 0 ||
      check.rowsRead !== expectedCommits * rows ||
      check.duplicates !== 0
    ) {
      problems.push(
        `${b.backend} concurrent: ${JSON.stringify(check)}, expected ${expectedCommits} snapshots and ${expectedCommits * rows} distinct rows`,
      );
    }
    const t0 = Math.min(...results.map((x) => x.startedAt));
    const t1 = Math.max(...results.map((x) => x.endedAt));
    const commitMs = results.flatMap((x) => x.commitMs);
    const appendMs = results.flatMap((x) => x.writeMs.map((w, i) => w + x.commitMs[i]));
    concurrent.push({
      backend: b.backend,
      writers,
      commitsPerWriter: writerCommits,
      rowsPerCommit: rows,
      wallMs: t1 - t0,
      commitsPerSec: (expectedCommits / (t1 - t0)) * 1000,
      commit: dist(commitMs),
      append: dist(appendMs),
      lostRaces: results.reduce((s, x) => s + (x.ops.lostRaces ?? 0), 0),
      peakRssMiB: Math.max(...results.map((x) => x.peakRssMiB)),
      peakRssMiBPerWriter: results.map((x) => x.peakRssMiB),
      check,
    });

    log(`${b.backend}: cleaning up`);
    if (b.s3) await runChild(TASKS, 'cleanup', { warehouse: b.warehouse, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
    else await rm(b.warehouse, { recursive: true, force: true });
  }

  const json = {
    name,
    description:
      'Small-append commit latency (serial, p50/p99) and commits/s with concurrent writer processes, through the built @tidemark/core, on local disk and on Ceph RGW.',
    environment: environment(),
    totalSeconds: (performance.now() - started) / 1000,
    serial,
    concurrent,
    problems,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : null,
  };
  return { name, json, markdown: toMarkdown(json) };
}

function toMarkdown(json) {
  const e = json.environment;
  const ms = (v) => fmtNum(v, v >= 100 ? 0 : 1);
  const s0 = json.serial[0];
  const serialRows = json.serial.map((s) => [
    s.backend,
    `${ms(s.commit.p50)} / ${ms(s.commit.p99)}`,
    `${ms(s.write.p50)} / ${ms(s.write.p99)}`,
    `${ms(s.append.p50)} / ${ms(s.append.p99)}`,
    fmtNum(s.commitsPerSec, 1),
    `${ms(s.firstQuarterCommitP50)} → ${ms(s.lastQuarterCommitP50)}`,
    `${ms(s.firstQuarterWriteP50)} → ${ms(s.lastQuarterWriteP50)}`,
    fmtInt(s.peakRssMiB),
  ]);
  const concRows = json.concurrent.map((c) => [
    c.backend,
    `${c.writers} × ${c.commitsPerWriter}`,
    fmtNum(c.commitsPerSec, 1),
    fmtNum(c.wallMs / 1000, 1),
    `${ms(c.commit.p50)} / ${ms(c.commit.p99)}`,
    `${ms(c.append.p50)} / ${ms(c.append.p99)}`,
    fmtInt(c.lostRaces),
    `${fmtInt(c.peakRssMiB)}`,
    c.check.latestId === c.writers * c.commitsPerWriter &&
    c.check.missingSnapshots === 0 &&
    c.check.duplicates === 0 &&
    c.check.rowsRead === c.writers * c.commitsPerWriter * c.rowsPerCommit
      ? 'yes'
      : '**NO**',
  ]);
  const ops = json.serial.map(
    (s) =>
      `- ${s.backend}: storage calls per append (write + commit): ${Object.entries(s.opsPerCommit)
        .filter(([k]) => k !== 'lostRaces' && k !== 'verifyConditionalWrites')
        .map(([k, v]) => `${k} ${fmtNum(v, 1)}`)
        .join(', ')}; reads in the first 10 appends ${s.readsPerCommitFirst.join(' ')}, last 10 ${s.readsPerCommitLast.join(' ')}.`,
  );
  return [
    '# Commit benchmark',
    '',
    `${e.date} · Node ${e.node} · ${e.cpu} × ${e.cores} · ${e.memoryGiB} GiB · took ${fmtNum(json.totalSeconds, 0)} s.`,
    '',
    `## Serial small appends (${s0 ? `${s0.commits} appends of ${s0.rowsPerCommit} rows, one process` : '–'})`,
    '',
    markdownTable(
      [
        'backend',
        'commit ms p50 / p99',
        'write ms p50 / p99',
        'append (write + commit) ms p50 / p99',
        'appends/s',
        'commit p50 first → last quarter',
        'write p50 first → last quarter',
        'peak RSS MiB',
      ],
      serialRows,
    ),
    '',
    '## Concurrent writers (separate processes, one table)',
    '',
    markdownTable(
      [
        'backend',
        'writers × appends',
        'commits/s',
        'wall s',
        'commit ms p50 / p99',
        'append ms p50 / p99',
        'lost snapshot races',
        'peak RSS MiB (max of writers)',
        'table correct',
      ],
      concRows,
    ),
    '',
    '## What is measured',
    '',
    `- One append = \`table.newBatchWrite()\` + \`write(RecordBatch of ${s0?.rowsPerCommit ?? 100} rows)\` + \`prepareCommit()\` (**write**: one zstd Parquet data file) then \`TableCommit.commit({ identifier, messages })\` (**commit**: delta manifest + manifest lists + base-manifest merge + \`snapshot-N\` create-if-absent + LATEST hint). One commitUser per process with increasing identifiers (streaming pattern, so each commit also runs the idempotency check). Unpartitioned append table (bucket -1), default options (\`manifest.merge-min-count\` 30, \`commit.max-retries\` 10).`,
    `- Serial: ${WARMUP} warm-up appends (not recorded), then the recorded ones. The quarter columns show how latency moves as the table grows (p50 of the first vs last 25 % of appends).`,
    '- Concurrent: the writer processes wait for a common start time after their imports; commits/s = all appends ÷ (last writer end − first writer start). Latencies are pooled over all writers and include lost races, re-reads and backoff. A lost snapshot race = a `createIfAbsent(snapshot-N)` that found the snapshot already created by another writer (the commit then rebases and retries). "table correct": contiguous snapshot ids 1..N, and every row read back exactly once.',
    ...ops,
    json.s3
      ? `- s3 = Ceph RGW (memstore OSD) at ${json.s3.endpoint} on the same 2-core machine: loopback network, CPU shared with the client; every S3 figure includes RGW's own CPU time.`
      : '- S3 rows skipped: no S3 server configured.',
    '- local = benchmarks/work/ on the repo file system; LocalFileIO fsyncs every file and its directory.',
    '- Machine: 2 shared cores with other jobs running (tests, S3 servers); treat single figures as ±30 %.',
    ...problemsSection(json.problems),
  ].join('\n');
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--commits') opts.commits = Number(argv[++i]);
    else if (a === '--rows') opts.rows = Number(argv[++i]);
    else if (a === '--writers') opts.writers = Number(argv[++i]);
    else if (a === '--writer-commits') opts.writerCommits = Number(argv[++i]);
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

await runIfMain(import.meta.url, () => run({ ...parseArgs(process.argv.slice(2)), s3: s3FromEnv() }));
