/**
 * Primary-key write benchmark: upserts/s of N rows (30 % of them updates of earlier keys) into a
 * primary-key table with 4 buckets, against appends/s of the same rows into an append table with 4
 * buckets, measured in the same run (rounds interleave the two, each in a fresh child process with
 * its peak RSS; see lib/pk-tasks.mjs). Then the upsert's peak RSS at two `write-buffer-size`
 * settings, to show that the writer's memory is bounded by its buffer. Every round splits its CPU
 * by thread (main, the encode pool's workers, V8's helpers); one more round of each writer runs
 * under the sampling profiler and splits the main thread's CPU by phase (lib/cpu-phases.mjs).
 *
 *   node benchmarks/pk.bench.mjs [--rows 1000000] [--runs 3] [--buffers 8mb,32mb]
 *
 * Results go to benchmarks/results/pk.json and pk.md. Imports the BUILT packages.
 */
import os from 'node:os';
import path from 'node:path';

import { median, runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, fmtRate, markdownTable, problemsSection } from './lib/report.mjs';
import { runIfMain } from './lib/standalone.mjs';

export const name = 'pk';

const TASKS = new URL('./lib/pk-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 1_800_000;

/**
 * @param {{ rows?: number, runs?: number, buffers?: string[], log?: (m: string) => void }} [options]
 */
export async function run(options = {}) {
  const rows = options.rows ?? 1_000_000;
  const runs = options.runs ?? 3;
  const buffers = options.buffers ?? ['8 mb', '32 mb'];
  const log = options.log ?? ((m) => console.error(m));
  const started = performance.now();
  const loadAtStart = os.loadavg()[0];
  const workDir = path.join(WORK_DIR, 'pk');
  const ipcPath = path.join(workDir, `input-${rows}.arrow`);
  const problems = [];
  const keys = Math.round(rows * 0.7);

  log(`preparing ${fmtInt(rows)} rows (cached at ${ipcPath})`);
  await runChild(TASKS, 'prepare', { ipcPath, rows }, { timeoutMs: TIMEOUT_MS });

  const out = { upsert: [], append: [] };
  for (let r = 0; r < runs; r++) {
    for (const kind of ['upsert', 'append']) {
      log(`round ${r + 1}/${runs}: ${kind}`);
      const res = await runChild(TASKS, kind, { ipcPath, rows, warehouse: path.join(workDir, `wh-${kind}`) }, { timeoutMs: TIMEOUT_MS });
      out[kind].push(res);
      const wantRows = kind === 'upsert' ? keys : rows;
      if (res.readRows !== wantRows) problems.push(`${kind} round ${r + 1}: read back ${res.readRows} rows, expected ${wantRows}`);
      if (kind === 'upsert' && res.distinctKeys !== keys)
        problems.push(`upsert round ${r + 1}: ${res.distinctKeys} distinct keys, expected ${keys}`);
    }
  }
  // Profiling slows the process down: its round is not timed, only its shares are used.
  const profiled = {};
  for (const kind of ['upsert', 'append']) {
    log(`profiled round: ${kind}`);
    profiled[kind] = await runChild(
      TASKS,
      kind,
      { ipcPath, rows, warehouse: path.join(workDir, `wh-${kind}`), profile: true },
      { timeoutMs: TIMEOUT_MS },
    );
  }
  const memory = [];
  for (const size of buffers) {
    log(`upsert with write-buffer-size ${size}`);
    const res = await runChild(
      TASKS,
      'upsert',
      { ipcPath, rows, warehouse: path.join(workDir, 'wh-mem'), writeBufferSize: size },
      { timeoutMs: TIMEOUT_MS },
    );
    if (res.readRows !== keys) problems.push(`upsert (write-buffer-size ${size}): read back ${res.readRows} rows, expected ${keys}`);
    memory.push({ writeBufferSize: size, ...pick(res) });
  }

  const summary = (list) => ({
    ms: median(list.map((x) => x.ms)),
    msRuns: list.map((x) => x.ms),
    rowsPerSec: (rows / median(list.map((x) => x.ms))) * 1000,
    cpuMs: median(list.map((x) => x.cpuMs)),
    mainCpuMs: median(list.map((x) => x.mainCpuMs)),
    workerCpuMs: median(list.map((x) => x.workerCpuMs)),
    helperCpuMs: median(list.map((x) => x.helperCpuMs)),
    peakRssMiB: median(list.map((x) => x.writePeakRssMiB)),
    baseRssMiB: median(list.map((x) => x.baseRssMiB)),
    files: list[0].files,
    fileMiB: list[0].bytes / 2 ** 20,
  });
  const perRound = out.upsert.map((u, i) => u.ms / out.append[i].ms);
  const json = {
    name,
    description: `Upserts of ${rows} rows (30 % updates of earlier keys) into a primary-key table with 4 buckets vs appends of the same rows into an append table with 4 buckets; peak RSS of the upsert at two write-buffer-size settings.`,
    environment: environment(),
    totalSeconds: (performance.now() - started) / 1000,
    rows,
    keys,
    rounds: runs,
    upsert: summary(out.upsert),
    append: summary(out.append),
    upsertOverAppendTime: median(perRound),
    upsertOverAppendTimeRuns: perRound,
    upsertOverAppendCpu: median(out.upsert.map((u, i) => u.cpuMs / out.append[i].cpuMs)),
    phases: Object.fromEntries(
      Object.entries(profiled).map(([kind, res]) => [
        kind,
        {
          cpuMs: res.cpuMs,
          mainCpuMs: res.mainCpuMs,
          workerCpuMs: res.workerCpuMs,
          helperCpuMs: res.helperCpuMs,
          phases: res.phases,
          otherTop: res.otherTop,
        },
      ]),
    ),
    loadAverage: [loadAtStart, os.loadavg()[0]],
    memory,
    problems,
  };
  return { name, json, markdown: toMarkdown(json) };
}

function pick(res) {
  return { ms: res.ms, peakRssMiB: res.writePeakRssMiB, baseRssMiB: res.baseRssMiB, files: res.files, fileMiB: res.bytes / 2 ** 20 };
}

/** The markdown report of a result (exported so a saved pk.json can be rendered again). */
export function toMarkdown(json) {
  const e = json.environment;
  const row = (label, s) => [
    label,
    fmtInt(json.rows),
    `${fmtInt(s.ms)} (${s.msRuns.map((x) => fmtInt(x)).join(' / ')})`,
    fmtRate(s.rowsPerSec),
    fmtInt(s.cpuMs),
    `${fmtInt(s.mainCpuMs)} / ${fmtInt(s.workerCpuMs)} / ${fmtInt(s.helperCpuMs)}`,
    s.files,
    fmtNum(s.fileMiB, 1),
    fmtInt(s.baseRssMiB),
    fmtInt(s.peakRssMiB),
  ];
  return [
    '# Primary-key write benchmark',
    '',
    `${e.date} · Node ${e.node} · ${e.cpu} × ${e.cores} · ${e.memoryGiB} GiB · took ${fmtNum(json.totalSeconds, 0)} s.`,
    '',
    markdownTable(
      [
        'writer',
        'rows',
        'ms median (runs)',
        'rows/s',
        'CPU ms',
        'CPU main / encode workers / V8 helpers',
        'files',
        'file MiB',
        'RSS before MiB',
        'peak RSS MiB',
      ],
      [row('upsert into primary-key table (4 buckets)', json.upsert), row('append into append table (4 buckets)', json.append)],
    ),
    '',
    `Upsert ÷ append wall time: ${fmtNum(json.upsertOverAppendTime, 2)} (median of per-round ratios ${json.upsertOverAppendTimeRuns.map((x) => fmtNum(x, 2)).join(' / ')}); CPU time: ${fmtNum(json.upsert.cpuMs / json.append.cpuMs, 2)} (median CPU ms; the steadier figure on this shared machine).`,
    '',
    ...targetLines(json),
    ...phaseSection(json),
    '## Memory bounded by write-buffer-size',
    '',
    markdownTable(
      ['write-buffer-size', 'ms', 'files', 'file MiB', 'RSS before MiB', 'peak RSS MiB', 'growth MiB'],
      json.memory.map((m) => [
        m.writeBufferSize,
        fmtInt(m.ms),
        m.files,
        fmtNum(m.fileMiB, 1),
        fmtInt(m.baseRssMiB),
        fmtInt(m.peakRssMiB),
        fmtInt(m.peakRssMiB - m.baseRssMiB),
      ]),
    ),
    '',
    '## What is measured',
    '',
    `- Data (benchmarks/lib/pk-tasks.mjs): ${fmtInt(json.rows)} rows of id BIGINT NOT NULL, name STRING, amount DOUBLE, ts TIMESTAMP(3), in 100,000-row Arrow batches loaded from a cached IPC file (not timed). The first 70 % insert ${fmtInt(json.keys)} distinct keys in a permuted order, the last 30 % update keys inserted before.`,
    '- Timed: `newBatchWrite()`, one `write(batch)` per batch, `prepareCommit()`, `newCommit().commit()`, local disk. Primary-key table: primary key id, `bucket` 4, `write-only` true (no compaction; it is measured separately), default `write-buffer-size` (256 MiB) in the main rows. Append table: `bucket` 4, `bucket-key` id.',
    '- After timing, each table is read back: the primary-key table must hold exactly the distinct keys, the append table every row.',
    '- RSS before = RSS after imports and loading the Arrow input (about the size of the input); peak RSS = the high-water mark of the process when the commit returned (before the read-back); growth = peak − before, i.e. what the writer itself held.',
    `- Machine: ${e.cores} shared cores with other jobs running${json.loadAverage ? ` (1-minute load average ${fmtNum(json.loadAverage[0], 1)} at the start, ${fmtNum(json.loadAverage[1], 1)} at the end)` : ''}; compare ratios from the same run. CPU by thread: main thread and the threads started by the write (the Parquet encode pool) from /proc/self/task, V8's helper threads (GC, compiler) = the rest of the process.`,
    ...problemsSection(json.problems),
  ].join('\n');
}

/** The issue's target for this row: ≥ 0.7 × append speed, CPU ≤ 1.4 × append. */
function targetLines(json) {
  const speed = 1 / json.upsertOverAppendTime;
  const cpu = json.upsert.cpuMs / json.append.cpuMs;
  return [
    `Target: upsert ≥ 0.7 × append speed (now ${fmtNum(speed, 2)} ×: ${speed >= 0.7 ? 'met' : 'not met'}), CPU ≤ 1.4 × append (now ${fmtNum(cpu, 2)} ×: ${cpu <= 1.4 ? 'met' : 'not met'}).`,
    '',
  ];
}

/** CPU per thread and per phase of the profiled rounds, and where the upsert's extra CPU goes. */
function phaseSection(json) {
  if (!json.phases?.upsert || !json.phases?.append) return [];
  const u = json.phases.upsert;
  const a = json.phases.append;
  const names = [...new Set([...Object.keys(u.phases), ...Object.keys(a.phases)])].sort((x, y) => (u.phases[y] ?? 0) - (u.phases[x] ?? 0));
  const rows = names.map((n) => [
    `main thread: ${n}`,
    fmtInt(u.phases[n] ?? 0),
    fmtInt(a.phases[n] ?? 0),
    fmtInt((u.phases[n] ?? 0) - (a.phases[n] ?? 0)),
  ]);
  rows.push(['encode workers', fmtInt(u.workerCpuMs), fmtInt(a.workerCpuMs), fmtInt(u.workerCpuMs - a.workerCpuMs)]);
  rows.push(['V8 helper threads (GC, compiler)', fmtInt(u.helperCpuMs), fmtInt(a.helperCpuMs), fmtInt(u.helperCpuMs - a.helperCpuMs)]);
  rows.push(['total', fmtInt(u.cpuMs), fmtInt(a.cpuMs), fmtInt(u.cpuMs - a.cpuMs)]);
  const diff = (n) => (u.phases[n] ?? 0) - (a.phases[n] ?? 0);
  const buffer = ['sort keys', 'sort', 'merge', 'gather', 'file write'].reduce((sum, n) => sum + diff(n), 0);
  const extra = u.cpuMs - a.cpuMs;
  const summary =
    `The upsert's extra CPU in this round, ${fmtInt(extra)} ms: the primary-key write buffer and its files (sort keys, sort, merge, gather, file write) ${fmtInt(buffer)} ms, ` +
    `garbage collection ${fmtInt(diff('gc') + u.helperCpuMs - a.helperCpuMs)} ms (main thread and V8's helper threads), the encode workers ${fmtInt(u.workerCpuMs - a.workerCpuMs)} ms ` +
    `(three more columns: _KEY_, _SEQUENCE_NUMBER, _VALUE_KIND, on fewer rows), the rest of the main thread ${fmtInt(u.mainCpuMs - a.mainCpuMs - buffer - diff('gc'))} ms. ` +
    `Routing rows to buckets (hashing each row's key as a BinaryRow) takes ${fmtInt(u.phases.route ?? 0)} and ${fmtInt(a.phases.route ?? 0)} ms of the main thread` +
    (largestPhase(u.phases) === 'route' && largestPhase(a.phases) === 'route' ? ', the largest phase of both writers.' : '.');
  const other = (u.otherTop ?? [])
    .filter((o) => o.ms >= 1)
    .map((o) => `${o.fn} ${fmtInt(o.ms)} ms`)
    .join('; ');
  return [
    '## Where the CPU goes (one profiled round each)',
    '',
    markdownTable(['CPU ms', 'upsert', 'append', 'upsert − append'], rows),
    '',
    "Main-thread phases are the profile's shares of the main thread's measured CPU, each sample given to the nearest phase function on its stack (benchmarks/lib/pk-tasks.mjs `PHASES`): convert = input to table batches, route = (partition, bucket) of each row, sort keys / sort / merge / gather = the primary-key write buffer, stats = file statistics, encode = the main thread's share of Parquet encoding, gc = the main thread's garbage collection, vm = V8 outside JavaScript, other = unclaimed frames.",
    '',
    summary,
    ...(other ? ['', `Unclaimed main-thread frames of the upsert, by self time: ${other}.`] : []),
    '',
  ];
}

function largestPhase(phases) {
  return Object.entries(phases).reduce((best, e) => (best === null || e[1] > best[1] ? e : best), null)?.[0];
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rows') opts.rows = Number(argv[++i]);
    else if (a === '--runs') opts.runs = Number(argv[++i]);
    else if (a === '--buffers') opts.buffers = argv[++i].split(',').map((s) => s.replace(/(\d)([a-z])/i, '$1 $2'));
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

await runIfMain(import.meta.url, () => run(parseArgs(process.argv.slice(2))));
