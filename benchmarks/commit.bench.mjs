/**
 * Commit benchmark: latency of small appends committed one after another (p50/p99) and the
 * storage requests of each commit by kind (get/head/list/put/conditional-put/delete) and in
 * sequential round trips, as the history grows to `--commits` snapshots; then commits/s with 1, 2,
 * 4 and 8 concurrent writer processes on one table; on local disk and on the S3 server, with peak
 * RSS (tasks in lib/commit-tasks.mjs; each writer is a fresh child process).
 *
 *   node benchmarks/commit.bench.mjs [--commits 1000] [--rows 100] [--writers 1,2,4,8] [--writer-commits 25] [--s3-only]
 *                                    [--contention-only]
 *
 * `--contention-only` skips the serial appends (a few minutes less; the report then has no serial
 * section): for tuning the concurrent rows. Each concurrent row also reports the CPU the writers
 * and the S3 server's daemons used, and what that allows on the machine's cores (lib/process-cpu.mjs).
 *
 * S3 rows need S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET (the harness
 * `npm run bench` starts or reuses the test server and passes them in). Results go to
 * benchmarks/results/commit.json and commit.md. Imports the BUILT packages.
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { runChild } from './lib/measure.mjs';
import { cpuWindow } from './lib/process-cpu.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable, problemsSection, runLine } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { percentile } from './lib/stats.mjs';

export const name = 'commit';

const TASKS = new URL('./lib/commit-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 600_000;
const WARMUP = 5;

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

const KINDS = ['get', 'head', 'list', 'put', 'conditional-put', 'delete'];

/**
 * Requests of the commit calls by kind: mean per commit over all of them, and how reads
 * (get + head + list) and round trips move with the snapshot count (windows of 10 commits).
 */
function requestSummary(perCommit) {
  const mean = {};
  for (const k of [...KINDS, 'roundTrips']) mean[k] = perCommit.reduce((s, c) => s + (c[k] ?? 0), 0) / Math.max(1, perCommit.length);
  const reads = (c) => (c.get ?? 0) + (c.head ?? 0) + (c.list ?? 0);
  const windows = [];
  for (const start of [0, 10, 100, 500, 1000, 2000]) {
    if (start + 10 > perCommit.length) continue;
    const w = perCommit.slice(start, start + 10);
    windows.push({
      from: start + 1,
      to: start + 10,
      reads: w.reduce((s, c) => s + reads(c), 0) / w.length,
      roundTrips: w.reduce((s, c) => s + (c.roundTrips ?? 0), 0) / w.length,
      maxRoundTrips: Math.max(...w.map((c) => c.roundTrips ?? 0)),
    });
  }
  const last = perCommit.slice(-10);
  if (last.length > 0 && perCommit.length > 10) {
    windows.push({
      from: perCommit.length - last.length + 1,
      to: perCommit.length,
      reads: last.reduce((s, c) => s + reads(c), 0) / last.length,
      roundTrips: last.reduce((s, c) => s + (c.roundTrips ?? 0), 0) / last.length,
      maxRoundTrips: Math.max(...last.map((c) => c.roundTrips ?? 0)),
    });
  }
  const steady = perCommit.slice(20);
  return {
    mean,
    windows,
    roundTripsP50:
      steady.length > 0
        ? percentile(
            steady.map((c) => c.roundTrips ?? 0),
            50,
          )
        : null,
    roundTripsMax: steady.length > 0 ? Math.max(...steady.map((c) => c.roundTrips ?? 0)) : null,
  };
}

const TIME_KEYS = ['backoff', 'expire', 'write', 'read', 'cpu'];

/** Mean ms per commit in each part of the timeline (commit-tasks.mjs), over all commits. */
function timeSummary(perCommit) {
  const out = {};
  for (const k of TIME_KEYS) out[k] = perCommit.reduce((s, c) => s + (c[k] ?? 0), 0) / Math.max(1, perCommit.length);
  return out;
}

/**
 * The snapshot attempts of all writers: how many per commit, how long an attempt took (lost ones
 * apart), the backoff drawn after a loss, and the commits whose time was mostly backoff.
 */
function attemptSummary(attempts, commits) {
  const lost = attempts.filter((a) => a.outcome !== 'created');
  const created = attempts.filter((a) => a.outcome === 'created');
  const waits = lost.map((a) => a.waitMs);
  const byRetry = {};
  for (const a of created) byRetry[a.retry] = (byRetry[a.retry] ?? 0) + 1;
  return {
    perCommit: attempts.length / Math.max(1, commits),
    createdAttemptMs: created.length > 0 ? dist(created.map((a) => a.attemptMs)) : null,
    lostAttemptMs: lost.length > 0 ? dist(lost.map((a) => a.attemptMs)) : null,
    waitMs: waits.length > 0 ? dist(waits) : null,
    /** Commits by the retry number of their successful attempt (0 = first attempt won). */
    wonAtRetry: byRetry,
  };
}

/**
 * The longest run of consecutive snapshots created by one writer: a writer that just created a
 * snapshot has nothing to read before its next commit, while every other writer must read it first,
 * so under saturation one writer can win many times in a row while the others lose (the tail).
 */
function longestRun(results) {
  const owner = new Map();
  for (const x of results) for (const id of x.snapshotIds) owner.set(id, x.writerId);
  let best = 0;
  let run = 0;
  let prev = null;
  for (const id of [...owner.keys()].sort((a, b) => a - b)) {
    const w = owner.get(id);
    run = w === prev ? run + 1 : 1;
    prev = w;
    best = Math.max(best, run);
  }
  return best;
}

/** The `n` slowest commits of all writers, each with where its time went and its attempts (JSON only). */
function slowestCommits(results, n) {
  const all = results.flatMap((x) =>
    x.commitMs.map((ms, i) => ({
      writerId: x.writerId,
      commitMs: ms,
      timeMs: x.commitTime[i],
      attempts: x.attempts.filter((a) => a.identifier === i + 1 + (x.warmup ?? 0)),
    })),
  );
  return all.sort((a, b) => b.commitMs - a.commitMs).slice(0, n);
}

/**
 * CPU per commit of the writer processes (each reports its own) and of the S3 server's daemons,
 * and the most commits/s the machine's cores allow at that cost. The server is shared: its CPU
 * includes whatever other clients asked of it meanwhile, so the figure is an upper bound of the
 * server's share (and the ceiling a lower bound). `machine` is every process on the machine.
 */
function cpuSummary(results, server, commits) {
  const cores = os.cpus().length;
  const writersMs = results.reduce((s, x) => s + (x.cpuMs ?? 0), 0);
  const writeCpuMs = results.reduce((s, x) => s + (x.writeCpuMs ?? 0), 0);
  const commitCpuMs = results.reduce((s, x) => s + (x.commitCpuMs ?? 0), 0);
  const daemons = server.daemons ?? {};
  const serverMs = Object.values(daemons).reduce((s, d) => s + d.cpuMs, 0);
  const perCommitMs = (writersMs + serverMs) / commits;
  const machine = server.machine;
  return {
    cores,
    wallMs: server.wallMs,
    writersMs,
    daemons: server.daemons,
    serverMs,
    writerPerCommitMs: writersMs / commits,
    /** Of the writers' CPU per commit: writing the data file, and the commit call. */
    writeCpuPerCommitMs: writeCpuMs / commits,
    commitCpuPerCommitMs: commitCpuMs / commits,
    serverPerCommitMs: serverMs / commits,
    perCommitMs,
    ceilingCommitsPerSec: perCommitMs > 0 ? (cores * 1000) / perCommitMs : null,
    machineBusy: machine ? machine.busyMs / (machine.busyMs + machine.idleMs) : null,
    othersMs: machine ? Math.max(0, machine.busyMs - writersMs - serverMs) : null,
  };
}

/**
 * @param {{ log?: (msg: string) => void, s3?: object, commits?: number, rows?: number, writers?: number[], writerCommits?: number, s3Only?: boolean, contentionOnly?: boolean }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const commits = options.commits ?? 1000;
  const rows = options.rows ?? 100;
  const writerCounts = options.writers ?? [1, 2, 4, 8];
  const writerCommits = options.writerCommits ?? 25;
  const started = performance.now();
  const backends = [];
  if (!options.s3Only) backends.push({ backend: 'local', warehouse: path.join(WORK_DIR, `commit-${process.pid}`), s3: undefined });
  if (options.s3) {
    backends.push({ backend: 's3 (RGW)', warehouse: `s3://${options.s3.bucket}/bench/commit-${Date.now().toString(36)}`, s3: options.s3 });
  }
  const serial = [];
  const concurrent = [];
  const latency = [];
  const casRace = [];
  const problems = [];

  for (const b of backends) {
    // --- the store's own request latency (the floor under every round trip) ------------------
    const lat = await runChild(TASKS, 'latency', { warehouse: `${b.warehouse}/latency`, s3: b.s3, n: 100 }, { timeoutMs: TIMEOUT_MS });
    latency.push({ backend: b.backend, put: dist(lat.put), createIfAbsent: dist(lat.createIfAbsent), get: dist(lat.get) });

    // --- serial small appends --------------------------------------------------------------
    if (!options.contentionOnly) {
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
        requests: requestSummary(r.commitKinds),
        peakRssMiB: r.peakRssMiB,
        commitMs: r.commitMs,
        writeMs: r.writeMs,
      });
    }

    // --- concurrent writers: the contention curve ------------------------------------------
    for (const writers of writerCounts) {
      const wh2 = `${b.warehouse}/concurrent-${writers}`;
      log(`${b.backend}: ${writers} writer processes × ${writerCommits} appends of ${rows} rows`);
      await runChild(TASKS, 'create', { warehouse: wh2, s3: b.s3 });
      const startAt = Date.now() + 3000 + 500 * writers;
      const running = Promise.all(
        Array.from({ length: writers }, (_, w) =>
          runChild(
            TASKS,
            'commits',
            { warehouse: wh2, s3: b.s3, commits: writerCommits, rows, writerId: w, startAt },
            { timeoutMs: TIMEOUT_MS },
          ),
        ),
      );
      // The server's and the machine's CPU over the timed part (the writers report their own).
      await sleep(Math.max(0, startAt - Date.now()));
      const window = await cpuWindow();
      const results = await running;
      const serverCpu = await window.stop();
      const check = await runChild(TASKS, 'check', { warehouse: wh2, s3: b.s3 }, { timeoutMs: TIMEOUT_MS });
      const expectedCommits = writers * writerCommits;
      if (
        check.latestId !== expectedCommits ||
        check.missingSnapshots !== 0 ||
        check.rowsRead !== expectedCommits * rows ||
        check.duplicates !== 0
      ) {
        problems.push(
          `${b.backend} concurrent ×${writers}: ${JSON.stringify(check)}, expected ${expectedCommits} snapshots and ${expectedCommits * rows} distinct rows`,
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
        // Attempts that found their snapshot id taken by the check before the create (no create sent).
        takenBeforeCreate:
          results.reduce((s, x) => s + x.attempts.filter((a) => a.outcome === 'already-exists').length, 0) -
          results.reduce((s, x) => s + (x.ops.lostRaces ?? 0), 0),
        gaveUp: results.reduce((s, x) => s + (x.ops.gaveUp ?? 0), 0),
        requests: requestSummary(results.flatMap((x) => x.commitKinds)),
        timeMs: timeSummary(results.flatMap((x) => x.commitTime)),
        attempts: attemptSummary(
          results.flatMap((x) => x.attempts),
          expectedCommits,
        ),
        slowest: slowestCommits(results, 3),
        longestRun: longestRun(results),
        peakRssMiB: Math.max(...results.map((x) => x.peakRssMiB)),
        peakRssMiBPerWriter: results.map((x) => x.peakRssMiB),
        cpu: cpuSummary(results, b.s3 ? serverCpu : { ...serverCpu, daemons: null }, expectedCommits),
        check,
      });
      if (!b.s3) await rm(wh2, { recursive: true, force: true });

      // The store alone under the same contention: GET + create-if-absent rounds, no table.
      {
        const wins = writerCommits;
        const at = Date.now() + 1500 + 300 * writers;
        const race = await Promise.all(
          Array.from({ length: writers }, (_, w) =>
            runChild(TASKS, 'casRace', { warehouse: `${wh2}-cas`, s3: b.s3, wins, writerId: w, startAt: at }, { timeoutMs: TIMEOUT_MS }),
          ),
        );
        const r0 = Math.min(...race.map((x) => x.startedAt));
        const r1 = Math.max(...race.map((x) => x.endedAt));
        casRace.push({
          backend: b.backend,
          writers,
          winsPerWriter: wins,
          winsPerSec: ((wins * writers) / (r1 - r0)) * 1000,
          lostPerWin: race.reduce((s, x) => s + x.lost, 0) / (wins * writers),
          roundMs: dist(race.flatMap((x) => x.roundMs)),
        });
        if (!b.s3) await rm(`${wh2}-cas`, { recursive: true, force: true });
      }
    }

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
    latency,
    casRace,
    problems,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : null,
  };
  return { name, json, markdown: toMarkdown(json) };
}

/**
 * The sentence naming the CPU limit: for the S3 row at 4 writers (else the last row), what the
 * measured CPU per commit allows on the machine's cores; the cheapest row of that backend (no
 * contention: no lost attempts) as the best case; and the CPU budget of 20 commits/s.
 */
function cpuLimit(json) {
  const rows = json.concurrent.filter((c) => c.cpu?.ceilingCommitsPerSec);
  const row = rows.find((c) => c.backend.startsWith('s3') && c.writers === 4) ?? rows[rows.length - 1];
  if (row === undefined) return [];
  const u = row.cpu;
  const cheapest = rows.filter((c) => c.backend === row.backend).sort((a, b) => a.cpu.perCommitMs - b.cpu.perCommitMs)[0];
  const target = 20;
  const budget = (u.cores * 1000) / target;
  return [
    `**The limit (${row.backend}, ${row.writers} writers):** one commit costs ${fmtNum(u.perCommitMs, 0)} ms of CPU ` +
      `(${fmtNum(u.writerPerCommitMs, 0)} in the writers, ${fmtNum(u.serverPerCommitMs, 0)} in the S3 server), so ${u.cores} cores allow at most ` +
      `${fmtNum(u.ceilingCommitsPerSec, 1)} commits/s; at the cheapest (${cheapest.writers} writer${cheapest.writers === 1 ? '' : 's'}: ` +
      `${fmtNum(cheapest.cpu.perCommitMs, 0)} ms) ${fmtNum(cheapest.cpu.ceilingCommitsPerSec, 1)} commits/s. ` +
      `${target} commits/s needs at most ${fmtNum(budget, 0)} ms of CPU per commit, writers and server together. ` +
      `The server's CPU includes other agents' requests to it, so these ceilings are lower bounds. ` +
      `During this run the machine was ${fmtNum((u.machineBusy ?? 0) * 100, 0)} % busy and other processes used ${fmtNum((u.othersMs ?? 0) / 1000, 1)} CPU s ` +
      `of the ${fmtNum((u.cores * u.wallMs) / 1000, 1)} the cores had: the measured commits/s sit below the ceiling by about that share.`,
    ...lostAttemptFloor(row, rows, budget, target),
    '',
  ];
}

/**
 * Requests a lost attempt cannot do without (commit-request-counts.test.ts pins them): the lost
 * create; the winner's snapshot, its two manifest lists and its delta manifest (what the next
 * snapshot builds on), a HEAD of its new data file (the base check); the base list for a snapshot
 * on top of it; a HEAD of the next schema id and one GET past the winner before the next create.
 */
const LOST_ATTEMPT_MIN_REQUESTS = 9;

/**
 * The sentence naming the floor contention puts under CPU per commit: what one lost attempt costs
 * (requests and CPU, from the difference to the uncontended row of the same backend), its
 * minimum (the requests it cannot do without × the server's CPU per request, measured at 1
 * writer), and what 20 commits/s would leave for the lost attempts of a commit.
 */
function lostAttemptFloor(row, rows, budget, target) {
  const alone = rows.find((c) => c.backend === row.backend && c.writers === 1);
  const lostPerCommit = (row.attempts?.perCommit ?? 1) - 1;
  if (alone === undefined || !row.requests || !alone.requests || lostPerCommit <= 0.05) return [];
  const requestsOf = (c) => KINDS.reduce((n, k) => n + (c.requests.mean[k] ?? 0), 0);
  // One more request per commit than the commit call makes: the data file's PUT.
  const serverPerRequest = alone.cpu.serverPerCommitMs / (requestsOf(alone) + 1);
  // The writer's commit call alone (the data file's encoding is no request's cost).
  const writerPerRequest = alone.cpu.commitCpuPerCommitMs / requestsOf(alone);
  const lostRequests = (requestsOf(row) - requestsOf(alone)) / lostPerCommit;
  const lostMs = (row.cpu.perCommitMs - alone.cpu.perCommitMs) / lostPerCommit;
  const floorMs = LOST_ATTEMPT_MIN_REQUESTS * (serverPerRequest + writerPerRequest);
  const left = budget - alone.cpu.perCommitMs;
  return [
    '',
    `**The floor under contention (${row.backend}, ${row.writers} writers):** ${fmtNum(lostPerCommit, 2)} lost attempts per commit, ` +
      `each ${fmtNum(lostRequests, 1)} requests and ${fmtNum(lostMs, 0)} ms of CPU (the difference to 1 writer per lost attempt). ` +
      `A lost attempt needs at least ${LOST_ATTEMPT_MIN_REQUESTS} requests (the lost create; the winner's snapshot, manifest lists, delta manifest ` +
      `and new data file; a base list on top of it; the next schema id and snapshot id), and a request costs ` +
      `${fmtNum(serverPerRequest, 1)} ms of server CPU (1 writer: server CPU per commit ÷ requests per commit, the data file's PUT included) ` +
      `and ${fmtNum(writerPerRequest, 1)} ms of writer CPU (the commit call's CPU ÷ its requests): ` +
      `at least ${fmtNum(floorMs, 0)} ms of CPU per lost attempt. ` +
      `The uncontended commit alone costs ${fmtNum(alone.cpu.perCommitMs, 0)} ms, so ${target} commits/s ` +
      (left > 0
        ? `leaves ${fmtNum(left, 0)} ms per commit for its lost attempts: at most ${fmtNum(left / floorMs, 2)} lost attempts per commit at that floor.`
        : `is out of reach even without contention on these cores.`),
  ];
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
  const kindRows = json.serial.map((s) => [
    s.backend,
    ...KINDS.map((k) => fmtNum(s.requests.mean[k], 2)),
    fmtNum(s.requests.mean.roundTrips, 2),
    `${fmtInt(s.requests.roundTripsP50)} / ${fmtInt(s.requests.roundTripsMax)}`,
  ]);
  const growthRows = json.serial.flatMap((s) =>
    s.requests.windows.map((w) => [s.backend, `${w.from}–${w.to}`, fmtNum(w.reads, 1), fmtNum(w.roundTrips, 1), fmtInt(w.maxRoundTrips)]),
  );
  const concRows = json.concurrent.map((c) => [
    c.backend,
    `${c.writers} × ${c.commitsPerWriter}`,
    fmtNum(c.commitsPerSec, 1),
    fmtNum(c.wallMs / 1000, 1),
    `${ms(c.commit.p50)} / ${ms(c.commit.p99)}`,
    `${ms(c.append.p50)} / ${ms(c.append.p99)}`,
    `${fmtInt(c.lostRaces)} (${fmtNum(c.lostRaces / (c.writers * c.commitsPerWriter), 2)})`,
    c.takenBeforeCreate === undefined ? '–' : fmtInt(c.takenBeforeCreate),
    fmtInt(c.gaveUp ?? 0),
    fmtNum(c.requests.mean.roundTrips, 1),
    `${fmtInt(c.peakRssMiB)}`,
    c.check.latestId === c.writers * c.commitsPerWriter &&
    c.check.missingSnapshots === 0 &&
    c.check.duplicates === 0 &&
    c.check.rowsRead === c.writers * c.commitsPerWriter * c.rowsPerCommit
      ? 'yes'
      : '**NO**',
  ]);
  const pct = (v) => (v === null || v === undefined ? '–' : `${fmtInt(v * 100)} %`);
  const cpuRows = json.concurrent
    .filter((c) => c.cpu)
    .map((c) => {
      const u = c.cpu;
      const daemons = u.daemons
        ? Object.entries(u.daemons)
            .map(([n, d]) => `${n} ${ms(d.cpuMs / (c.writers * c.commitsPerWriter))}`)
            .join(', ')
        : '–';
      return [
        c.backend,
        String(c.writers),
        fmtNum(c.commitsPerSec, 1),
        u.writeCpuPerCommitMs === undefined
          ? ms(u.writerPerCommitMs)
          : `${ms(u.writerPerCommitMs)} (${ms(u.writeCpuPerCommitMs)} + ${ms(u.commitCpuPerCommitMs)})`,
        u.daemons ? `${ms(u.serverPerCommitMs)} (${daemons})` : '–',
        ms(u.perCommitMs),
        u.ceilingCommitsPerSec === null ? '–' : fmtNum(u.ceilingCommitsPerSec, 1),
        pct(u.machineBusy),
        u.othersMs === null ? '–' : fmtNum(u.othersMs / 1000, 1),
      ];
    });
  const timeRows = json.concurrent.map((c) => {
    const t = c.timeMs ?? {};
    const a = c.attempts ?? {};
    const won = Object.entries(a.wonAtRetry ?? {})
      .map(([r, n]) => `${r}:${n}`)
      .join(' ');
    return [
      c.backend,
      String(c.writers),
      ms(c.commit.mean),
      ...TIME_KEYS.map((k) => ms(t[k] ?? 0)),
      fmtNum(a.perCommit ?? 0, 2),
      a.createdAttemptMs ? `${ms(a.createdAttemptMs.p50)} / ${ms(a.createdAttemptMs.p99)}` : '–',
      a.lostAttemptMs ? `${ms(a.lostAttemptMs.p50)} / ${ms(a.lostAttemptMs.p99)}` : '–',
      a.waitMs ? `${ms(a.waitMs.mean)} / ${ms(a.waitMs.max)}` : '–',
      won,
      String(c.longestRun ?? '–'),
    ];
  });
  const casRows = (json.casRace ?? []).map((r) => [
    r.backend,
    String(r.writers),
    fmtNum(r.winsPerSec, 1),
    fmtNum(r.lostPerWin, 2),
    `${ms(r.roundMs.p50)} / ${ms(r.roundMs.p99)}`,
  ]);
  const latRows = (json.latency ?? []).map((l) => [
    l.backend,
    `${fmtNum(l.put.p50, 2)} / ${fmtNum(l.put.p99, 2)}`,
    `${fmtNum(l.createIfAbsent.p50, 2)} / ${fmtNum(l.createIfAbsent.p99, 2)}`,
    `${fmtNum(l.get.p50, 2)} / ${fmtNum(l.get.p99, 2)}`,
  ]);
  return [
    '# Commit benchmark',
    '',
    `${runLine(e, json.totalSeconds)} ` +
      'The 2 cores were shared with several other agents running builds, tests and benchmarks at the same time: treat single figures as ±30 %.',
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
    '### Storage requests per commit (the commit call alone, mean over all serial commits)',
    '',
    markdownTable(['backend', ...KINDS, 'sequential round trips', 'round trips p50 / max (after 20 commits)'], kindRows),
    '',
    'Round trips: a round trip starts whenever a request is issued while none is in flight, so requests issued together count once. ' +
      'Commit 1 is cold (conditional-write probe on S3, LATEST hint, first reads); the first commit past `snapshot.num-retained.min` runs a full expiration; every ~30th commit merges manifests (one manifest PUT and one round trip more).',
    '',
    '### As the history grows (reads = get + head + list of the commit call, mean over 10 commits)',
    '',
    markdownTable(['backend', 'commits (= snapshots)', 'reads', 'round trips', 'max round trips'], growthRows),
    '',
    '## Concurrent writers (separate processes, one table): the contention curve',
    '',
    markdownTable(
      [
        'backend',
        'writers × appends',
        'commits/s',
        'wall s',
        'commit ms p50 / p99',
        'append ms p50 / p99',
        'lost snapshot races (per commit)',
        'ids found taken before the create',
        'commits that gave up (retried)',
        'round trips per commit',
        'peak RSS MiB (max of writers)',
        'table correct',
      ],
      concRows,
    ),
    '',
    '### The CPU ceiling: CPU per commit and what the cores allow',
    '',
    markdownTable(
      [
        'backend',
        'writers',
        'commits/s',
        'writer CPU ms per commit (data file write + commit call)',
        'S3 server CPU ms per commit',
        'CPU ms per commit',
        `${json.environment.cores} cores ÷ CPU per commit = most commits/s this machine allows`,
        'machine busy (all processes)',
        "other processes' CPU s during the run",
      ],
      cpuRows,
    ),
    '',
    ...cpuLimit(json),
    'Writer CPU: `process.cpuUsage()` of each writer process over its timed appends (encoding the Parquet data file, manifests and snapshot, the HTTP client), summed. ' +
      "S3 server CPU: utime + stime of the radosgw, ceph-osd and ceph-mon processes (/proc/<pid>/stat) from the common start to the last writer's end; the server is shared with the other agents, " +
      'so this includes their requests too (an upper bound of our share, making the ceiling a lower bound). ' +
      'Machine busy: all cores, all processes (/proc/stat) over the same window; "other processes" is that minus the writers and the server: what the other agents took from the cores meanwhile.',
    '',
    "### Where a commit's time goes (mean ms per commit call, pooled over the writers)",
    '',
    markdownTable(
      [
        'backend',
        'writers',
        'commit mean',
        'backoff (sleeping)',
        'expiration',
        'writes in flight',
        'reads only',
        'cpu / waiting for a core',
        'attempts per commit',
        'winning attempt ms p50 / p99',
        'lost attempt ms p50 / p99',
        'backoff drawn ms mean / max',
        'commits won at retry n (n:count)',
        'longest run of one writer',
      ],
      timeRows,
    ),
    '',
    "The parts add up to the commit mean: backoff is the time asleep between attempts (the prefetch of the winner's files runs underneath), " +
      'expiration the automatic expiration after the snapshot exists, then writes (any PUT, conditional PUT or DELETE in flight), reads (only GET / HEAD / LIST in flight), ' +
      'and cpu (no request in flight: encoding, decoding, and on this shared machine waiting for a core). ' +
      'Longest run: the most consecutive snapshots one writer created with no snapshot of another writer in between. An attempt runs from its latest-snapshot probe to the answer of its snapshot create: ' +
      'the window in which another writer can take the id (the snapshot is built on that probe).',
    '',
    '### The store alone under the same contention',
    '',
    markdownTable(['backend', 'processes', 'creates won/s', 'lost creates per win', 'ms per win p50 / p99'], casRows),
    '',
    'Each process loops "GET the newest key, create-if-absent the next one" on one shared key sequence (the two requests no snapshot commit can avoid), ' +
      'until it has won as many creates as a writer commits above: the ceiling the store puts on commits/s at this contention.',
    '',
    "## The store's own latency (100 serial 1 KiB requests)",
    '',
    markdownTable(['backend', 'PUT ms p50 / p99', 'create-if-absent ms p50 / p99', 'GET ms p50 / p99'], latRows),
    '',
    '## What is measured',
    '',
    `- One append = \`table.newBatchWrite()\` + \`write(RecordBatch of ${s0?.rowsPerCommit ?? 100} rows)\` + \`prepareCommit()\` (**write**: one zstd Parquet data file) then \`TableCommit.commit({ identifier, messages })\` (**commit**: latest-snapshot probe + in-flight record, base check + delta manifest + manifest lists (+ manifest merge), \`snapshot-N\` create-if-absent, LATEST hint, automatic expiration). One commitUser per process with increasing identifiers (streaming pattern, so each commit also runs the idempotency check). Unpartitioned append table (bucket -1), default options (\`manifest.merge-min-count\` 30, \`commit.max-retries\` 10, \`snapshot.num-retained.min\` 10, \`snapshot.time-retained\` 1 h).`,
    `- Serial: ${WARMUP} warm-up appends (not recorded), then the recorded ones. The quarter columns show how latency moves as the table grows (p50 of the first vs last 25 % of appends).`,
    '- Concurrent: the writer processes wait for a common start time after their imports; commits/s = all appends (write + commit) ÷ (last writer end − first writer start). Latencies are pooled over all writers and include lost races, re-reads and backoff. A lost snapshot race = a `createIfAbsent(snapshot-N)` that found the snapshot already created by another writer (the commit then re-reads only the new snapshots and rewrites only the base list and the snapshot, after a full-jitter backoff of at most two attempts\' time that shrinks with each lost race). A committer that saw other writers in the last 16 snapshots first checks (one GET) that `snapshot-N` is still absent right before its create, unless the attempt wrote nothing since its probe found that id absent (a retry on the base list written while backing off): "ids found taken before the create" counts the attempts that stopped there instead of losing a create. A commit that loses `commit.max-retries` (10) races in a row throws `CommitRetryExhaustedError`; the writer then commits the same identifier again, as a streaming job re-commits its checkpoint ("gave up" column; its latency includes every try). "table correct": contiguous snapshot ids 1..N, and every row read back exactly once.',
    json.s3
      ? `- s3 = Ceph RGW (memstore OSD) at ${json.s3.endpoint} on the same 2-core machine: loopback network, CPU shared with the client; every S3 figure includes RGW's own CPU time.`
      : '- S3 rows skipped: no S3 server configured.',
    '- local = benchmarks/work/ on the repo file system; LocalFileIO fsyncs every file and its directory.',
    "- Machine: 2 cores shared with other agents' jobs (tests, builds, S3 servers, other benchmarks); treat single figures as ±30 %.",
    ...problemsSection(json.problems),
  ].join('\n');
}

await runStandalone(import.meta.url, run, {
  '--commits': 'commits',
  '--rows': 'rows',
  '--writers': ['writers', 'numbers'],
  '--writer-commits': 'writerCommits',
  '--s3-only': ['s3Only', 'flag'],
  '--contention-only': ['contentionOnly', 'flag'],
});
