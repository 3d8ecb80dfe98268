/**
 * Where a contended commit's CPU goes: `--writers` writer processes (default 4) each run
 * `--writer-commits` small appends (default 15) on one fresh table, as the contention part of
 * commit.bench.mjs does, and report the writers' CPU per commit call and per snapshot attempt.
 * With `--cpu-prof <dir>` every writer profiles its timed appends (TIDEMARK_BENCH_CPU_PROF, see
 * lib/commit-tasks.mjs) and the script prints the profiles' self time by function and by package, pooled over the writers (self-time shares stay
 * meaningful on a shared machine, where wall time does not).
 *
 *   S3_ENDPOINT=... node benchmarks/commit-cpu-profile.mjs [--writers 4] [--writer-commits 15] [--cpu-prof dir] [--local]
 *
 * With TIDEMARK_BENCH_TARGETS=1 it also prints the commit calls' requests per commit by kind and
 * target (`get snapshot/snapshot-N`, `list c/schema`, ...).
 *
 * A diagnostic, not part of `npm run bench`: nothing is written to benchmarks/results/. On a
 * machine shared with other jobs, compare runs interleaved (A B A B): CPU ms per commit barely
 * moves with load, commits/s does.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

import { runChild } from './lib/measure.mjs';
import { cpuWindow } from './lib/process-cpu.mjs';
import { WORK_DIR } from './lib/report.mjs';
import { s3FromEnv } from './lib/standalone.mjs';

const TASKS = new URL('./lib/commit-tasks.mjs', import.meta.url);

function parseArgs(argv) {
  const opts = { writers: 4, writerCommits: 15, cpuProf: null, local: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--writers') opts.writers = Number(argv[++i]);
    else if (a === '--writer-commits') opts.writerCommits = Number(argv[++i]);
    else if (a === '--cpu-prof') opts.cpuProf = path.resolve(argv[++i]);
    else if (a === '--local') opts.local = true;
    else throw new Error(`unknown argument ${a} (expected --writers N, --writer-commits N, --cpu-prof DIR, --local)`);
  }
  return opts;
}

/** Self time (ms) per function and per package of the .cpuprofile files in `dir`. */
async function profileSummary(dir) {
  const byFn = new Map();
  const byPkg = new Map();
  let total = 0;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile'))) {
    const p = JSON.parse(await readFile(path.join(dir, f), 'utf8'));
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    const self = new Map();
    for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
    for (const [id, us] of self) {
      const cf = nodes.get(id).callFrame;
      if (cf.functionName === '(idle)') continue;
      const url = cf.url.replace(/^file:\/\//, '');
      const pkg =
        url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ??
        url.match(/packages\/([^/]+)\//)?.[1] ??
        (url.startsWith('node:') ? 'node' : url === '' ? cf.functionName : 'other');
      const fn = `${cf.functionName || '(anonymous)'} ${path.basename(url)}:${cf.lineNumber + 1}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + us / 1000);
      byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us / 1000);
      total += us / 1000;
    }
  }
  const top = (m, n) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${v.toFixed(0).padStart(6)} ms  ${k}`);
  return { total, pkgs: top(byPkg, 20), fns: top(byFn, 40) };
}

const opts = parseArgs(process.argv.slice(2));
const s3 = opts.local ? undefined : s3FromEnv();
if (!opts.local && s3 === undefined) throw new Error('S3_ENDPOINT is not set (or pass --local)');
const stamp = `${Date.now()}-${process.pid}`;
const warehouse = s3 ? `s3://${s3.bucket}/bench-commit-cpu-${stamp}` : path.join(WORK_DIR, `commit-cpu-${stamp}`);
if (opts.cpuProf) {
  await rm(opts.cpuProf, { recursive: true, force: true });
  await mkdir(opts.cpuProf, { recursive: true });
}
console.error(
  `commit CPU profile: ${opts.writers} writers × ${opts.writerCommits} appends on ${s3 ? 's3' : 'local'} (machine shared with other jobs)`,
);
try {
  await runChild(TASKS, 'create', { warehouse, s3 });
  const startAt = Date.now() + 3000 + 500 * opts.writers;
  const env = opts.cpuProf ? { TIDEMARK_BENCH_CPU_PROF: opts.cpuProf } : undefined;
  const running = Promise.all(
    Array.from({ length: opts.writers }, (_, w) =>
      runChild(
        TASKS,
        'commits',
        { warehouse, s3, commits: opts.writerCommits, rows: 100, writerId: w, startAt },
        { ...(env ? { env } : {}) },
      ),
    ),
  );
  // The S3 server's CPU over the timed part (with other agents' requests to it: an upper bound).
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
  const window = await cpuWindow();
  const results = await running;
  const server = await window.stop();
  const serverMs = Object.values(server.daemons ?? {}).reduce((n, d) => n + d.cpuMs, 0);
  const check = await runChild(TASKS, 'check', { warehouse, s3 });
  const commits = opts.writers * opts.writerCommits;
  const attempts = results.reduce((n, r) => n + r.attempts.length, 0);
  const commitCpu = results.reduce((n, r) => n + r.commitCpuMs, 0);
  const writeCpu = results.reduce((n, r) => n + r.writeCpuMs, 0);
  const wall = Math.max(...results.map((r) => r.endedAt)) - Math.min(...results.map((r) => r.startedAt));
  const lost = results.reduce((n, r) => n + (r.ops.lostRaces ?? 0), 0);
  const kinds = {};
  for (const r of results) for (const k of r.commitKinds) for (const [n, v] of Object.entries(k)) kinds[n] = (kinds[n] ?? 0) + v;
  const summary = {
    writers: opts.writers,
    commits,
    correct: check.latestId === commits && check.missingSnapshots === 0 && check.duplicates === 0,
    commitCpuMsPerCommit: +(commitCpu / commits).toFixed(1),
    commitCpuMsPerAttempt: +(commitCpu / attempts).toFixed(1),
    writeCpuMsPerCommit: +(writeCpu / commits).toFixed(1),
    ...(s3 ? { serverCpuMsPerCommit: +(serverMs / commits).toFixed(1) } : {}),
    attemptsPerCommit: +(attempts / commits).toFixed(2),
    lostCreatesPerCommit: +(lost / commits).toFixed(2),
    requestsPerCommit: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, +(v / commits).toFixed(2)])),
    commitsPerSec: +((commits / wall) * 1000).toFixed(1),
  };
  console.log(JSON.stringify(summary));
  const targets = {};
  for (const r of results) for (const [k, v] of Object.entries(r.targets ?? {})) targets[k] = (targets[k] ?? 0) + v;
  if (Object.keys(targets).length > 0) {
    console.log('\nrequests per commit by kind and target (commit calls):');
    for (const [k, v] of Object.entries(targets).sort((a, b) => b[1] - a[1])) console.log(`${(v / commits).toFixed(2).padStart(6)}  ${k}`);
  }
  if (opts.cpuProf) {
    const p = await profileSummary(opts.cpuProf);
    console.log(`\nself time of the writers' timed appends (data file writes + commit calls, ${p.total.toFixed(0)} ms), by package:`);
    console.log(p.pkgs.join('\n'));
    console.log('\nby function:');
    console.log(p.fns.join('\n'));
  }
} finally {
  await runChild(TASKS, 'cleanup', { warehouse, s3 }).catch((e) => console.error(`cleanup failed: ${e.message}`));
}
