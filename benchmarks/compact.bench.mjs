/**
 * Append-compaction benchmark: `compactAppendTable` (full) against a raw single-threaded
 * parquet-wasm read + rewrite of the same files, and against itself with the worker pool off
 * (`TIDEMARK_PARQUET_WORKERS=0`), runs interleaved. Two inputs: many small files (100 × 5,000
 * rows, as in the maintenance benchmark) and a few large ones (5 × 200,000 rows); local disk and,
 * when the harness passes one, the S3 server (small files only, one run, to stay within minutes).
 *
 *   node benchmarks/compact.bench.mjs [--runs 3] [--timeline 1]
 *
 * After the timed runs, each local case gets `--timeline` more runs (default 1, not timed) with the
 * pool timeline on (lib/pool-timeline.mjs): busy % of each worker and of the main thread, the
 * encoding left after the last decode, and the longest idle gaps of the workers with what ended them.
 * Tasks are lib/maintenance-tasks.mjs (`compact-data`, `raw-rewrite`, `compact`). Results go to
 * benchmarks/results/compact.json and compact.md. Imports the BUILT packages.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { median, medianRun, runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable } from './lib/report.mjs';
import { describeTimeline } from './lib/pool-timeline.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'compact';

const TASKS = new URL('./lib/maintenance-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;
const MODES = ['raw', 'compact', 'compactArrow', 'compactPoolOff', 'compactCopy'];

/**
 * @param {{ log?: (m: string) => void, s3?: object, runs?: number }} [options]
 * @returns {Promise<{ name: string, json: object, markdown: string }>}
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const runs = options.runs ?? 3;
  const timelineRuns = options.timeline ?? 1;
  const started = performance.now();
  const problems = [];
  const cases = [
    { backend: 'local', files: 100, rows: 5_000, runs, root: path.join(WORK_DIR, `compact-${process.pid}`) },
    // Inputs of 200,000 rows are two row groups of 100,000 each: `compactCopy` (copyRowGroups, off by
    // default) copies them without decoding, for comparison with the default rewrite.
    { backend: 'local', files: 5, rows: 200_000, runs, root: path.join(WORK_DIR, `compact-${process.pid}`), copy: true },
  ];
  if (options.s3) {
    const root = `s3://${options.s3.bucket}/bench/compact-${Date.now().toString(36)}`;
    cases.push({ backend: 's3 (RGW)', files: 100, rows: 5_000, runs: 1, root, s3: options.s3 });
  }
  const results = [];
  let n = 0;
  for (const c of cases) {
    const all = Object.fromEntries(MODES.map((m) => [m, []]));
    for (let i = 0; i < c.runs; i++) {
      for (const mode of MODES.filter((m) => m !== 'compactCopy' || c.copy)) {
        const label = `${c.backend} ${c.files} × ${fmtInt(c.rows)} rows: ${mode} run ${i + 1}/${c.runs}`;
        log(label);
        try {
          const warehouse = `${c.root}/w${n++}`;
          const data = await runChild(
            TASKS,
            'compact-data',
            { warehouse, files: c.files, rows: c.rows, s3: c.s3 },
            { timeoutMs: TIMEOUT_MS },
          );
          if (mode === 'raw') {
            const r = await runChild(
              TASKS,
              'raw-rewrite',
              { files: data.files, target: `${warehouse}/raw`, s3: c.s3 },
              { timeoutMs: TIMEOUT_MS },
            );
            all.raw.push({ ...r, inputBytes: r.bytesRead });
          } else {
            const env = mode === 'compactPoolOff' ? { TIDEMARK_PARQUET_WORKERS: '0' } : undefined;
            const r = await runChild(
              TASKS,
              'compact',
              { table: data.table, s3: c.s3, copyRowGroups: mode === 'compactCopy', passDecodedRows: mode !== 'compactArrow' },
              { timeoutMs: TIMEOUT_MS, env },
            );
            if (r.rows !== c.files * c.rows) problems.push(`${label}: compaction wrote ${r.rows} rows, expected ${c.files * c.rows}`);
            all[mode].push({ ...r, inputBytes: r.bytesRead });
          }
        } catch (e) {
          problems.push(`${label}: ${String(e.message).slice(0, 400)}`);
        }
      }
    }
    // Instrumented runs apart from the timed ones: the timeline's hooks cost a little CPU.
    const timelines = [];
    for (let i = 0; i < (c.s3 ? 0 : timelineRuns); i++) {
      const label = `${c.backend} ${c.files} × ${fmtInt(c.rows)} rows: timeline run ${i + 1}/${timelineRuns}`;
      log(label);
      try {
        const data = await runChild(
          TASKS,
          'compact-data',
          { warehouse: `${c.root}/w${n++}`, files: c.files, rows: c.rows },
          { timeoutMs: TIMEOUT_MS },
        );
        const r = await runChild(TASKS, 'compact', { table: data.table, timeline: true }, { timeoutMs: TIMEOUT_MS });
        timelines.push({ ms: r.ms, cpuMs: r.cpuMs, bytesWritten: r.bytesWritten, ...r.timeline });
        for (const line of describeTimeline(r.timeline)) log(`  ${line}`);
      } catch (e) {
        problems.push(`${label}: ${String(e.message).slice(0, 400)}`);
      }
    }
    if (!c.s3) await rm(c.root, { recursive: true, force: true });
    const summary = { backend: c.backend, files: c.files, rowsPerFile: c.rows, runs: c.runs };
    if (timelines.length > 0) summary.timelines = timelines;
    for (const mode of MODES) {
      if (all[mode].length === 0) continue;
      const m = medianRun(all[mode], 'ms');
      summary[mode] = {
        ms: m.ms,
        msRuns: all[mode].map((r) => r.ms),
        ...(all[mode].every((r) => r.cpuMs !== undefined)
          ? { cpuMs: median(all[mode].map((r) => r.cpuMs)), cpuMsRuns: all[mode].map((r) => r.cpuMs) }
          : {}),
        inputMB: m.inputBytes / 1e6,
        mbPerSec: m.inputBytes / 1e6 / (m.ms / 1000),
        rowsPerSec: (c.files * c.rows) / (m.ms / 1000),
        peakRssMiB: m.peakRssMiB,
        ...(m.filesAfter !== undefined ? { filesAfter: m.filesAfter } : {}),
        ...(all[mode].every((r) => r.phaseCpuMs !== undefined)
          ? {
              phaseCpuMs: Object.fromEntries(
                Object.keys(all[mode][0].phaseCpuMs).map((k) => [k, median(all[mode].map((r) => r.phaseCpuMs[k] ?? 0))]),
              ),
            }
          : {}),
        ...(m.bytesWritten !== undefined ? { outputMB: m.bytesWritten / 1e6 } : {}),
      };
    }
    const ratio = (a, b) => (summary[a] && summary[b] ? summary[b].ms / summary[a].ms : undefined);
    summary.compactVsRaw = ratio('compact', 'raw');
    summary.poolOffVsRaw = ratio('compactPoolOff', 'raw');
    summary.workersVsPoolOff = ratio('compact', 'compactPoolOff');
    summary.copyVsRaw = ratio('compactCopy', 'raw');
    summary.arrowVsRaw = ratio('compactArrow', 'raw');
    // CPU time is far less disturbed by other load than wall time: the work per row over raw's.
    const cpuRatio = (a, b) => (summary[a]?.cpuMs && summary[b]?.cpuMs ? summary[a].cpuMs / summary[b].cpuMs : undefined);
    summary.cpuVsRaw = cpuRatio('compact', 'raw');
    summary.poolOffCpuVsRaw = cpuRatio('compactPoolOff', 'raw');
    summary.copyCpuVsRaw = cpuRatio('compactCopy', 'raw');
    summary.arrowCpuVsRaw = cpuRatio('compactArrow', 'raw');
    results.push(summary);
  }
  const env = environment();
  const json = { benchmark: name, environment: env, runs, results, problems, totalSeconds: (performance.now() - started) / 1000 };
  return { name, json, markdown: toMarkdown(json) };
}

/** The markdown of a result (exported so a result file can be re-rendered without a run). */
export function toMarkdown(r) {
  const cell = (x) =>
    x
      ? `${fmtNum(x.ms / 1000, 2)} s · ${fmtNum(x.mbPerSec)} MB/s · ${fmtNum(x.peakRssMiB, 0)} MiB` +
        (x.outputMB !== undefined ? ` · out ${fmtNum(x.outputMB, 2)} MB` : '')
      : '–';
  const ratio = (x) => (x === undefined ? '–' : `${fmtNum(x, 2)}×`);
  const out = [
    '# Append-compaction benchmark',
    '',
    `${r.environment.date} · Node ${r.environment.node} · ${r.environment.cpu} × ${r.environment.cores} · took ${Math.round(r.totalSeconds)} s.`,
    '',
    markdownTable(
      [
        'backend',
        'input',
        'compactAppendTable (workers)',
        'compactAppendTable, pool off',
        'raw read + rewrite (1 thread)',
        'compaction ÷ raw (speed)',
        'pool off ÷ raw',
        'workers ÷ pool off',
        'CPU time ÷ raw: workers / pool off',
        'rows through Arrow (passDecodedRows: false): time · speed ÷ raw · CPU ÷ raw',
        'with copyRowGroups: time · speed ÷ raw · CPU ÷ raw',
      ],
      r.results.map((x) => [
        x.backend,
        `${x.files} files × ${fmtInt(x.rowsPerFile)} rows`,
        cell(x.compact),
        cell(x.compactPoolOff),
        cell(x.raw),
        ratio(x.compactVsRaw),
        ratio(x.poolOffVsRaw),
        ratio(x.workersVsPoolOff),
        x.cpuVsRaw === undefined ? '–' : `${fmtNum(x.cpuVsRaw, 2)} / ${fmtNum(x.poolOffCpuVsRaw, 2)}`,
        x.compactArrow
          ? `${cell(x.compactArrow)} · ${ratio(x.arrowVsRaw)} · ${x.arrowCpuVsRaw === undefined ? '–' : fmtNum(x.arrowCpuVsRaw, 2)}`
          : '–',
        x.compactCopy
          ? `${cell(x.compactCopy)} · ${ratio(x.copyVsRaw)} · ${x.copyCpuVsRaw === undefined ? '–' : fmtNum(x.copyCpuVsRaw, 2)}`
          : '–',
      ]),
    ),
    '',
    'Cells: median wall time · MB/s of input Parquet · peak RSS of the process · size of the output. Ratios are speed ratios (raw time ÷ ' +
      'compaction time) of the medians; all runs are in the JSON. *CPU time ÷ raw*: median CPU time (user + system, all ' +
      "threads) over raw's, the work done per input row, which other load on the machine barely changes (wall-time ratios " +
      'swing with it); with two workers on an idle machine, the speed ratio over raw approaches 2 ÷ this figure.',
    '',
    '- **compactAppendTable** (`full: true`): plans, reads every file through the ordered read-ahead (8 row groups, ' +
      'decoded on the worker pool, up to two short decode jobs waiting on each worker), writes one output file whose row ' +
      'groups go to the worker pool as soon as each is full (so the encoding of the first groups overlaps the decoding of ' +
      'the later inputs; groups cut one per worker, at least 131,072 rows, equal sizes; the ' +
      "last group's columns are split between the workers and stitched into one row group), " +
      "commits a COMPACT snapshot. The row groups of inputs in the table's current schema go from the decode workers " +
      'to the encode workers as Arrow IPC bytes (joined per output group on the encoding worker, statistics from the ' +
      "inputs' manifest entries): the main thread only hands bytes on. *Rows through Arrow*: the same with " +
      '`passDecodedRows: false`, where the main thread turns each decoded group into Arrow, evolves it, collects its ' +
      'statistics and serialises each output group again (the path before). ' +
      '*Pool off*: the same with `TIDEMARK_PARQUET_WORKERS=0`. *With copyRowGroups* ' +
      '(off by default): inputs whose row groups all hold 65,536 rows or more (here the 200,000-row inputs, two groups of ' +
      '100,000 each) have their row groups copied into the output without decoding, joined under one footer, their ' +
      "manifest statistics merged into the output's; the output is larger (the copied groups keep their size and " +
      'encoding, where a rewrite makes larger groups that compress better).',
    '- **raw read + rewrite**: per input file `read` + parquet-wasm `readParquet` + `writeParquet` (zstd) + `write`, on one ' +
      'thread, one output per input, no table logic.',
    '- Data: columns id BIGINT, name STRING, amount DOUBLE; one append commit per input file (not timed).',
    ...r.results
      .filter((x) => x.copyCpuVsRaw !== undefined && x.compactCopy !== undefined)
      .map(
        (x) =>
          `- ${x.files} × ${fmtInt(x.rowsPerFile)} rows with copyRowGroups: copying the row groups takes ${fmtNum(x.copyCpuVsRaw, 2)} × ` +
          `raw's CPU time (the default rewrite: ${fmtNum(x.cpuVsRaw ?? NaN, 2)} ×), at the price of a larger output ` +
          `(${fmtNum(x.compactCopy.outputMB, 2)} MB against ${fmtNum(x.compact?.outputMB ?? NaN, 2)} MB rewritten).`,
      ),
    ...r.results
      .filter((x) => x.cpuVsRaw !== undefined)
      .map(
        (x) =>
          `- Ceiling for ${x.backend} ${x.files} × ${fmtInt(x.rowsPerFile)} rows: with ${fmtNum(x.cpuVsRaw, 2)} × raw's CPU work, two ` +
          `idle cores give at most ${fmtNum(2 / x.cpuVsRaw, 2)} × raw's speed, less the time the reading and the encoding ` +
          'do not overlap (the last output group is encoded, column-split, after the last input is read). The extra work with workers over ' +
          `pool off (${fmtNum(x.cpuVsRaw - x.poolOffCpuVsRaw, 2)} × raw's) is a fixed cost per process that weighs most on ` +
          'small inputs: starting the worker threads and warming each one up (its own JS heap and wasm memory growing, its ' +
          'first slower calls); the compiled parquet-wasm is shared by all threads of the process (see read-data.md, ' +
          "*where a cold read's extra CPU goes*).",
      ),
    ...r.results
      .filter((x) => x.compact?.phaseCpuMs !== undefined)
      .map(
        (x) =>
          `- CPU time by phase, ${x.backend} ${x.files} × ${fmtInt(x.rowsPerFile)} rows (median of the timed runs): ` +
          Object.entries(x.compact.phaseCpuMs)
            .map(([phase, ms]) => `${phase} ${fmtNum(ms, 0)} ms`)
            .join(', ') +
          (x.raw?.cpuMs ? `; raw read + rewrite ${fmtNum(x.raw.cpuMs, 0)} ms in all` : '') +
          '.',
      ),
    ...timelineSection(r.results),
    '- The machine (2 cores) was shared with several other agents running builds, tests and benchmarks: absolute figures ' +
      'are noisy; ratios come from interleaved runs.',
    '',
  ];
  if (r.problems.length > 0) out.push('## Problems seen', '', ...r.problems.map((p) => `- ${p}`), '');
  return out.join('\n');
}

/** Markdown lines of the timeline runs (lib/pool-timeline.mjs), one block per case. */
function timelineSection(results) {
  const out = [];
  for (const x of results) {
    for (const t of x.timelines ?? []) {
      out.push(
        `- Timeline of one more ${x.backend} run, ${x.files} × ${fmtInt(x.rowsPerFile)} rows (${fmtNum(t.ms / 1000, 2)} s, ` +
          `CPU ${fmtNum(t.cpuMs / 1000, 2)} s, output ${fmtNum(t.bytesWritten / 1e6, 2)} MB):`,
        ...describeTimeline(t).map((l) => `  - ${l}`),
      );
      if (t.decodeJobs === 0) {
        // Every input's row groups were copied: the pool only encoded the writer's empty reference file.
        const phases = t.phases.map((p) => `${p.phase} ${fmtNum(p.ms, 0)} ms`).join(', ');
        out.push(
          `  - no input was decoded (every row group was copied): ${phases}; what is left is reading the inputs, joining ` +
            'the footers and the table work (planning, the commit), none of it parquet-wasm.',
        );
        continue;
      }
      const idle = Object.values(t.idleMsByCause).reduce((a, b) => a + b, 0);
      const onMain = t.idleMsByCause['nothing queued (waiting for the main thread to submit)'] + t.idleMsByCause['queued, not yet posted'];
      out.push(
        `  - limit: encoding went on for ${fmtNum(t.tailMs, 0)} ms after the last decode ` +
          `(${fmtNum((100 * t.tailMs) / Math.max(t.poolSpanMs, 1), 0)} % of the pool's busy span) with the workers busy ` +
          `${fmtNum((100 * t.tailEncodeMs) / Math.max(1, t.tailMs * t.workers.length), 0)} % of it: the last output group can ` +
          'only start when the last input is decoded, and its columns are split between the workers (the rest is the ' +
          'imbalance of the parts and a previous group still encoding); ' +
          `${fmtNum((100 * onMain) / Math.max(idle, 1), 0)} % of the workers' idle time waited on the main thread (busy ` +
          `${fmtNum(t.mainBusyPct, 0)} % of the run, a shared machine's other load included: it reads the inputs, hands the ` +
          'decoded IPC bytes on, plans and commits; rows of another schema still go through Arrow there).',
      );
    }
  }
  if (out.length > 0) {
    out.unshift(
      "- *Timelines*: per pool job, when it was queued, posted and run on which worker (the worker's clock); the " +
        "main thread's event-loop utilisation and the spans it was blocked (a 1 ms timer late by over 2 ms, which also " +
        'counts time the process was not scheduled on a shared machine). A worker gap is *nothing queued* when its ' +
        'next job was not yet submitted (the main thread had not got that far), *queued, not yet posted* when it was ' +
        'submitted but the worker had no job in hand (its last reply waited for the main thread).',
    );
  }
  return out;
}

await runStandalone(import.meta.url, run, { '--runs': 'runs', '--timeline': 'timeline' });
