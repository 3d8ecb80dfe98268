/**
 * The data-read benchmark (read-data.bench.mjs): rows/s of decoding a few large data files into Arrow,
 * for all columns and for 1 of 5 columns, by tidemark (`newRead().batches()`, Parquet decoded on
 * the worker pool), raw single-threaded parquet-wasm and DuckDB `read_parquet`, interleaved in one
 * invocation so that machine noise hits every reader alike. Tasks: lib/data-read-tasks.mjs.
 */
import path from 'node:path';

import { median, medianRun, runChild } from './measure.mjs';
import { WORK_DIR, fmtInt, fmtNum, fmtRate, markdownTable } from './report.mjs';

const TASKS = new URL('./data-read-tasks.mjs', import.meta.url);
const ALL = ['id', 'name', 'amount', 'ts', 'dt'];
const READERS = ['tidemark', 'tidemark1', 'parquetWasm', 'duckdb'];

/**
 * @param {{ rows?: number, files?: number, runs?: number, log: (m: string) => void }} options
 * @returns {Promise<object>} the figures (JSON-serialisable)
 */
export async function runDataRead(options) {
  const rows = options.rows ?? 1_000_000;
  const files = options.files ?? 5;
  const runs = options.runs ?? 3;
  const log = options.log;
  const problems = [];
  // v2: the files' row groups have equal sizes (the parallel writer's cut since then); a table
  // cached by an older run would be read with the old layout.
  const warehouse = path.join(WORK_DIR, `data-read-v2-${rows}-${files}`);
  log(`data read: preparing ${fmtInt(rows)} rows in ${files} files (cached under ${warehouse})`);
  const prepared = await runChild(TASKS, 'prepare', { warehouse, rows, files }, { timeoutMs: 600_000 });
  const cases = [];
  for (const [label, columns] of [
    ['all 5 columns', ALL],
    ['1 of 5 columns (id)', ['id']],
  ]) {
    const specs = {
      tidemark: { task: 'tidemark', args: { root: prepared.root, columns } },
      // The same read with the pool off: what the worker threads add (same code, one thread).
      tidemark1: { task: 'tidemark', args: { root: prepared.root, columns }, env: { TIDEMARK_PARQUET_WORKERS: '0' } },
      parquetWasm: { task: 'parquet-wasm', args: { files: prepared.files, columns } },
      duckdb: { task: 'duckdb', args: { files: prepared.files, columns } },
    };
    const all = Object.fromEntries(READERS.map((r) => [r, []]));
    for (let i = 0; i < runs; i++) {
      for (const reader of READERS) {
        const spec = specs[reader];
        if (spec === null) continue;
        log(`data read ${label}: ${reader} run ${i + 1}/${runs}`);
        try {
          all[reader].push(await runChild(TASKS, spec.task, spec.args, { timeoutMs: 600_000, env: spec.env }));
        } catch (e) {
          problems.push(`data read ${label} ${reader}: ${String(e.message).slice(0, 500)}`);
          specs[reader] = null;
        }
      }
    }
    const summary = { label, columns, rows, files };
    for (const reader of READERS) {
      if (all[reader].length === 0) continue;
      const m = medianRun(all[reader], 'ms');
      summary[reader] = {
        ms: m.ms,
        msRuns: all[reader].map((r) => r.ms),
        cpuMs: median(all[reader].map((r) => r.cpuMs)),
        cpuMsRuns: all[reader].map((r) => r.cpuMs),
        rowsPerSec: (m.rows / m.ms) * 1000,
        peakRssMiB: m.peakRssMiB,
        peakRssMiBRuns: all[reader].map((r) => r.peakRssMiB),
        idSum: m.idSum,
        rows: m.rows,
        ...(m.workers !== undefined ? { workers: m.workers } : {}),
        ...(m.warmMs !== undefined
          ? {
              warmMs: median(all[reader].map((r) => r.warmMs)),
              warmMsRuns: all[reader].map((r) => r.warmMs),
              warmRowsPerSec: (m.rows / median(all[reader].map((r) => r.warmMs))) * 1000,
              ...(m.warmCpuMs !== undefined ? { warmCpuMs: median(all[reader].map((r) => r.warmCpuMs)) } : {}),
            }
          : {}),
        ...(m.threads !== undefined ? { threads: m.threads } : {}),
      };
      if (m.rows !== rows) problems.push(`data read ${label} ${reader}: ${m.rows} rows, expected ${rows}`);
    }
    const sums = new Set(READERS.filter((r) => summary[r]).map((r) => summary[r].idSum));
    if (sums.size > 1) problems.push(`data read ${label}: readers disagree on sum(id): ${[...sums].join(' vs ')}`);
    const ratio = (a, b) => (summary[a] && summary[b] ? summary[a].rowsPerSec / summary[b].rowsPerSec : undefined);
    summary.vsParquetWasm = ratio('tidemark', 'parquetWasm');
    summary.vsDuckdb = ratio('tidemark', 'duckdb');
    summary.singleThreadVsParquetWasm = ratio('tidemark1', 'parquetWasm');
    summary.workersVsSingleThread = ratio('tidemark', 'tidemark1');
    const warm = (a, b) => (summary[a]?.warmRowsPerSec && summary[b] ? summary[a].warmRowsPerSec / summary[b].rowsPerSec : undefined);
    summary.warmVsParquetWasm = warm('tidemark', 'parquetWasm');
    summary.warmVsDuckdb = warm('tidemark', 'duckdb');
    summary.warmWorkersVsPoolOff =
      summary.tidemark?.warmMs && summary.tidemark1?.warmMs ? summary.tidemark1.warmMs / summary.tidemark.warmMs : undefined;
    // CPU time is far less disturbed by other load than wall time: tidemark's cost per row over the
    // raw decoder's. With w workers and an idle machine, wall-time speed-up ≈ w ÷ this ratio.
    summary.cpuVsParquetWasm = summary.tidemark && summary.parquetWasm ? summary.tidemark.cpuMs / summary.parquetWasm.cpuMs : undefined;
    cases.push(summary);
  }
  // The fixed cost in the first read of a process that raw parquet-wasm (imported before its clock
  // starts, on the thread that decodes) does not have: starting the workers.
  const poolStarts = [];
  for (let i = 0; i < runs; i++) {
    try {
      poolStarts.push(await runChild(TASKS, 'pool-start', {}, { timeoutMs: 120_000 }));
    } catch (e) {
      problems.push(`pool start: ${String(e.message).slice(0, 300)}`);
    }
  }
  const poolStart =
    poolStarts.length > 0
      ? { ms: median(poolStarts.map((r) => r.ms)), cpuMs: median(poolStarts.map((r) => r.cpuMs)), workers: poolStarts[0].workers }
      : undefined;
  const gaps = [];
  for (let i = 0; i < runs; i++) {
    try {
      gaps.push(await runChild(TASKS, 'cold-gap', { files: prepared.files }, { timeoutMs: 300_000 }));
    } catch (e) {
      problems.push(`cold gap: ${String(e.message).slice(0, 300)}`);
    }
  }
  const coldGap =
    gaps.length > 0
      ? Object.fromEntries(
          Object.keys(gaps[0]).map((k) => [
            k,
            Object.fromEntries(['ms', 'userMs', 'systemMs', 'minorFaults'].map((f) => [f, median(gaps.map((g) => g[k][f]))])),
          ]),
        )
      : undefined;
  return { rows, files, runs, cases, poolStart, coldGap, coldGapRuns: gaps, problems };
}

/** The cold-read gap taken apart (task `cold-gap`). */
function coldGapNotes(d) {
  const g = d.coldGap;
  if (!g) return [];
  const cpu = (x) => x.userMs + x.systemMs;
  const pass = (x) =>
    `${fmtNum(cpu(x), 0)} ms CPU (user ${fmtNum(x.userMs, 0)}, system ${fmtNum(x.systemMs, 0)}), ${fmtInt(x.minorFaults)} page faults`;
  return [
    `- **where a cold read's extra CPU goes** (all ${fmtInt(d.rows)} rows, all columns, decoded row group by row group in one fresh ` +
      `process, median of ${d.runs}): main thread first pass ${pass(g.mainCold)}; second pass ${pass(g.mainWarm)}. Then on a new ` +
      `worker thread: ${pass(g.workerNew)}; its second pass ${pass(g.workerWarm)}; a second new worker's first pass ` +
      `${pass(g.secondWorker)}. The first pass in a process costs ${fmtNum(cpu(g.mainCold) - cpu(g.mainWarm), 0)} ms more CPU ` +
      `than a warm one (${fmtNum(g.mainCold.userMs - g.mainWarm.userMs, 0)} ms of it user time), a new thread after it only ` +
      `${fmtNum(cpu(g.workerNew) - cpu(g.workerWarm), 0)}–${fmtNum(cpu(g.secondWorker) - cpu(g.workerWarm), 0)} ms (its own ` +
      'memory: the page faults and system time above). So the bulk is paid once per process, not per thread: V8 compiling ' +
      'parquet-wasm (lazily, then optimising the hot functions; a module compiled from the same bytes reuses that machine ' +
      'code, so the main thread and every worker share it), plus the main thread warming up (a `--cpu-prof` of these ' +
      'passes: the hottest wasm functions 2–3 × slower in the first pass, garbage collection 140 ms instead of 9, the copy ' +
      'of the IPC stream out of wasm memory 139 ms instead of 31). Raw parquet-wasm pays the same inside its own timed ' +
      'first read. A cold read therefore costs about the warm CPU plus this warm-up plus starting the workers (*cold pool start*), ' +
      'and on 2 cores its wall time is at least half of that. Letting the main thread decode while the workers start was ' +
      'tried and measured: it decoded 0–1 of the 10 row groups (the workers are ready soon after planning), so it was not ' +
      'kept. Cutting it further needs V8 to keep compiled wasm across processes (Node 20 has no API for that) ' +
      'or fewer threads to start (one worker plus the main thread saves one start).',
  ];
}

/** Markdown of the data-read section. */
export function dataReadMarkdown(d) {
  if (!d) return [];
  const cell = (x) => (x ? `${fmtNum(x.ms, 0)} ms · ${fmtRate(x.rowsPerSec)} rows/s · ${fmtNum(x.peakRssMiB, 0)} MiB` : '–');
  const r = (x, digits = 2) => (x === undefined ? '–' : fmtNum(x, digits));
  const workers = d.cases.find((c) => c.tidemark)?.tidemark.workers ?? '?';
  const out = [
    `## ${fmtInt(d.rows)} rows in ${d.files} data files`,
    '',
    `An append table of ${fmtInt(d.rows)} rows written by tidemark in ${d.files} commits of one file each (row groups ` +
      "as tidemark's writer cuts them: one per file up to 1,048,576 rows, its columns encoded on both workers; id BIGINT, name STRING of 16 unique chars, amount DOUBLE, " +
      'ts TIMESTAMP(3), dt STRING; zstd). ' +
      `Median of ${d.runs} fresh-process runs per reader, runs interleaved.`,
    '',
    markdownTable(
      [
        'columns',
        `tidemark (${workers} workers)`,
        'tidemark, pool off',
        'raw parquet-wasm (1 thread)',
        'DuckDB read_parquet',
        'tidemark ÷ raw',
        'tidemark ÷ DuckDB',
        'workers ÷ pool off',
        'CPU: tidemark ÷ raw',
        'warm pool: tidemark',
        'warm: ÷ raw / ÷ DuckDB / workers ÷ pool off',
      ],
      d.cases.map((c) => [
        c.label,
        cell(c.tidemark),
        cell(c.tidemark1),
        cell(c.parquetWasm),
        cell(c.duckdb),
        r(c.vsParquetWasm),
        r(c.vsDuckdb, 3),
        r(c.workersVsSingleThread),
        r(c.cpuVsParquetWasm),
        c.tidemark?.warmMs ? `${fmtNum(c.tidemark.warmMs, 0)} ms · ${fmtRate(c.tidemark.warmRowsPerSec)} rows/s` : '–',
        `${r(c.warmVsParquetWasm)} / ${r(c.warmVsDuckdb, 3)} / ${r(c.warmWorkersVsPoolOff)}`,
      ]),
    ),
    '',
    'Cells: median wall time · rows/s · peak RSS of the process (workers included). Speed ratios are rows/s ÷ rows/s. ' +
      '*CPU: tidemark ÷ raw* = median CPU time (user + system, all threads) of tidemark over raw parquet-wasm: the ' +
      'work per row, which other load barely disturbs; on an idle 2-core machine the wall-time speed-up over raw is ' +
      'about 2 ÷ this figure when decoding dominates.',
    '',
    '- **warm pool**: the same read a second time in the same process (median over runs), as a long-running service ' +
      'sees it: the worker threads have loaded parquet-wasm already (about 0.1–0.2 s per worker, paid by the first read).',
    '- **tidemark**: `openTable` + `newRead({ columns }).batches()` (planning included), summing `id`; every row group is ' +
      'decoded by parquet-wasm on the worker pool (`TIDEMARK_PARQUET_WORKERS`, default min(2, cores)) with an ordered ' +
      'read-ahead of 4 row groups; *pool off* is the same read with `TIDEMARK_PARQUET_WORKERS=0` (decoding on the main thread).',
    '- **raw parquet-wasm**: per file `fs.readFile` + `ParquetFile.read({ columns, batchSize: 2^20 })` + IPC into an ' +
      'apache-arrow Table on one thread, summing `id`: the decoder alone, without table logic.',
    '- **DuckDB**: `read_parquet([...files])` aggregating the same columns (count, sum(id), sum(length(name)), sum(amount), ' +
      'max(ts), max(dt)); native code, all its threads, nothing materialised in JS.',
    ...d.cases
      .filter((c) => c.duckdb?.cpuMs && c.parquetWasm?.cpuMs)
      .map((c) => {
        const best = c.tidemark?.warmCpuMs ?? c.tidemark?.cpuMs;
        return (
          `- **why ÷ DuckDB stays low (${c.label})**: CPU time per read of the ${fmtInt(c.rows)} rows, all threads: DuckDB ` +
          `${fmtNum(c.duckdb.cpuMs, 0)} ms, raw parquet-wasm ${fmtNum(c.parquetWasm.cpuMs, 0)} ms, tidemark ` +
          `${fmtNum(c.tidemark?.cpuMs, 0)} ms (${c.tidemark?.warmCpuMs ? `warm pool ${fmtNum(c.tidemark.warmCpuMs, 0)} ms` : 'first read'}). ` +
          `DuckDB does the read with ${fmtNum(best / c.duckdb.cpuMs, 1)} × less CPU work; both spread it over the same cores, ` +
          `so when both are CPU-bound tidemark ÷ DuckDB is about ${fmtNum(c.duckdb.cpuMs / best, 2)} (higher when DuckDB ` +
          'leaves a core idle). The limit is parquet-wasm decoding into Arrow in JS (DuckDB aggregates natively), not the table logic.'
        );
      }),
    ...d.cases
      .filter((c) => c.cpuVsParquetWasm && c.parquetWasm?.cpuMs && c.parquetWasm?.ms)
      .map((c) => {
        const r = c.cpuVsParquetWasm;
        const rawCores = c.parquetWasm.cpuMs / c.parquetWasm.ms;
        const gap = d.coldGap && c.columns.length === 5 ? d.coldGap.mainCold : undefined;
        const warmUp = gap ? gap.userMs + gap.systemMs - d.coldGap.mainWarm.userMs - d.coldGap.mainWarm.systemMs : undefined;
        return (
          `- **limit of a cold read (${c.label})**: on 2 cores a read takes at least its CPU time ÷ 2. A cold tidemark read ` +
          `does ${fmtNum(r, 2)} × raw's CPU work, so even against raw on exactly one core its speed-up is at most ` +
          `2 ÷ ${fmtNum(r, 2)} = ${fmtNum(2 / r, 2)}; raw's own first read ran on ${fmtNum(rawCores, 2)} cores (its CPU ÷ wall` +
          (rawCores > 1
            ? `: V8 compiles and collects garbage on helper threads), which lowers the bound to ${fmtNum(2 / (r * rawCores), 2)}. `
            : '; below 1 because other load took the cores in this run; on a quieter machine about 1.45, as V8 compiles and ' +
              'collects garbage on helper threads, which lowers the bound further). ') +
          `≥ 1.7 × would need the cold read's CPU within ${fmtNum(2 / 1.7, 2)} × raw's` +
          (warmUp
            ? `, while the once-per-process warm-up alone (above) is ${fmtNum(warmUp, 0)} ms of raw's ${fmtNum(c.parquetWasm.cpuMs, 0)} ms`
            : '') +
          ': out of reach for a first read' +
          (c.warmVsParquetWasm >= 1.7 ? `; the warm pool meets it (${fmtNum(c.warmVsParquetWasm, 2)} ×).` : '.')
        );
      }),
    ...(d.poolStart
      ? [
          `- **cold pool start** (the part of the first read that the warm read does not pay, and raw parquet-wasm has ` +
            `before its clock starts): ${d.poolStart.workers} workers started and running one tiny job each in ` +
            `${fmtNum(d.poolStart.ms, 0)} ms wall, ${fmtNum(d.poolStart.cpuMs, 0)} ms CPU (median of ${d.runs} fresh processes). ` +
            'A read starts the workers when it starts planning, so most of this overlaps the planning.',
        ]
      : []),
    ...coldGapNotes(d),
    '- The machine (2 cores) was shared with several other agents running builds, tests and benchmarks at the same time: ' +
      'absolute figures are noisy; the ratios come from one interleaved run.',
    '',
  ];
  if (d.problems.length > 0) out.push('Problems seen:', '', ...d.problems.map((p) => `- ${p}`), '');
  return out;
}
