/**
 * Read-path benchmark: scan planning and full-read throughput of tidemark against the
 * number of data files, on synthetic append tables written with the @tidemark/format codecs.
 *
 *   node benchmarks/read.bench.mjs [--sizes 1k,10k,100k,1m] [--runs 3] [--read-max-files 100000]
 *                                  [--large-read-runs 1] [--plan-only]
 *
 * Measured, each in a fresh child process (lib/read-tasks.mjs):
 * - planning: `openTable` + `newRead().plan()` of the latest snapshot: time, manifest entries
 *   decoded per second (every entry of every manifest the snapshot references, ADD and DELETE),
 *   peak RSS and its growth with the number of files, memory retained per live file; and the
 *   floors under it on the same manifests (zstd decompression alone, a walk over the entry bytes,
 *   decoding without folding, decoding and keeping every entry, receiving decoded entries by
 *   structured clone as from a worker thread). Tables above 100k live files have no data files
 *   (planning only);
 * - full read: tidemark `newRead().batches()` vs DuckDB `read_parquet` over the same live files
 *   (ratio from the same invocation, runs interleaved) and vs raw parquet-wasm decoding.
 *
 * Tables are generated once into benchmarks/work/ (gitignored) and reused. Results go to
 * benchmarks/results/read.json and read.md. Imports the BUILT packages (run the build first).
 */
import os from 'node:os';
import path from 'node:path';

import { median, medianRun, runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, fmtRate, markdownTable } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { ensureSyntheticTable } from './lib/synthetic-table.mjs';

export const name = 'read';

const TASKS = new URL('./lib/read-tasks.mjs', import.meta.url);
const SIZES = { '1k': 1_000, '10k': 10_000, '100k': 100_000, '1m': 1_000_000 };
/** Tables above this many live files are generated without data files: they are only planned. */
const MAX_FILES_WITH_DATA = 100_000;
const ROWS_PER_FILE = 50;
const PARTITIONS = 10;

/**
 * @typedef {object} ReadBenchOptions
 * @property {string[]} [sizes]        subset of '1k', '10k', '100k', '1m'
 * @property {boolean} [planOnly]      measure planning only (no full reads)
 * @property {number} [runs]           fresh-process runs per measurement (median reported)
 * @property {number} [readMaxFiles]   full reads only on tables with at most this many files
 * @property {number} [largeReadRuns]  runs per full read on tables above 10k files (default 1)
 * @property {(msg: string) => void} [log]
 */

/**
 * Runs the benchmark and returns the results and their markdown; writes nothing.
 *
 * @param {ReadBenchOptions} [options]
 * @returns {Promise<{ name: string, json: object, markdown: string }>}
 */
export async function run(options = {}) {
  const sizes = options.sizes ?? Object.keys(SIZES);
  const runs = options.runs ?? 3;
  const readMaxFiles = options.readMaxFiles ?? 100_000;
  const largeReadRuns = options.largeReadRuns ?? 1;
  const log = options.log ?? ((m) => console.error(m));
  const planOnly = options.planOnly ?? false;
  const started = performance.now();
  // The machine may be shared with other jobs: the load average is reported with the figures.
  const loadBefore = os.loadavg();
  const problems = [];

  const tables = [];
  for (const size of sizes) {
    const liveFiles = SIZES[size];
    if (liveFiles === undefined) throw new Error(`unknown size '${size}' (use ${Object.keys(SIZES).join(', ')})`);
    log(`table ${size}: preparing (cached under ${WORK_DIR})`);
    const meta = await ensureSyntheticTable(
      path.join(WORK_DIR, `read-append-${size}`),
      { liveFiles, rowsPerFile: ROWS_PER_FILE, partitions: PARTITIONS, dataFiles: liveFiles <= MAX_FILES_WITH_DATA },
      log,
    );
    tables.push({ size, meta });
  }

  // Is the engine there? One probe run decides, so baselines still run without it.
  let engineError = null;
  try {
    await runChild(TASKS, 'plan', { root: tables[0].meta.root }, { nodeArgs: ['--expose-gc'] });
  } catch (e) {
    engineError =
      String(e.message)
        .split('\n')
        .find((l) => /Error/.test(l)) ?? String(e.message).slice(0, 300);
    log(`tidemark engine unavailable, measuring baselines only: ${engineError}`);
    problems.push(`tidemark engine unavailable: ${engineError}`);
  }

  const planning = [];
  if (engineError === null) {
    for (const { size, meta } of tables) {
      const all = [];
      for (let i = 0; i < runs; i++) {
        log(`plan ${size}: run ${i + 1}/${runs}`);
        all.push(await runChild(TASKS, 'plan', { root: meta.root }, { nodeArgs: ['--expose-gc'], timeoutMs: 600_000 }));
      }
      const m = medianRun(all, 'planMs');
      const warmRuns = [];
      for (let i = 0; i < runs; i++) {
        log(`plan ${size}: warm run ${i + 1}/${runs}`);
        warmRuns.push(await runChild(TASKS, 'plan-warm', { root: meta.root }, { nodeArgs: ['--expose-gc'], timeoutMs: 600_000 }));
      }
      const warm = medianRun(warmRuns, 'planMs');
      if (warm.files !== meta.liveFiles)
        problems.push(`plan ${size}: the warm plan planned ${warm.files} files, table has ${meta.liveFiles}`);
      const limitRuns = [];
      for (let i = 0; i < runs; i++) {
        log(`plan ${size}: limits run ${i + 1}/${runs}`);
        limitRuns.push(await runChild(TASKS, 'plan-limits', { root: meta.root }, { timeoutMs: 600_000 }));
      }
      // Each floor is the median of its own runs (they are independent measurements).
      const limits = { ...limitRuns[0] };
      for (const k of [
        'decompressMs',
        'walkMs',
        'decodeMs',
        'decompressCpuMs',
        'walkCpuMs',
        'decodeCpuMs',
        'decodeKeepCpuMs',
        'cloneInCpuMs',
        'zstdBindingCpuMs',
        'zstdCliMs',
      ]) {
        const values = limitRuns.map((r) => r[k]).filter((v) => typeof v === 'number');
        limits[k] = values.length === 0 ? null : median(values);
      }
      const rate = (ms) => (limits.entries / ms) * 1000;
      if (m.files !== meta.liveFiles || m.rows !== meta.liveRows) {
        problems.push(`plan ${size}: planned ${m.files} files / ${m.rows} rows, table has ${meta.liveFiles} / ${meta.liveRows}`);
      }
      planning.push({
        size,
        liveFiles: meta.liveFiles,
        manifestEntries: meta.manifestEntries,
        manifests: meta.manifests,
        plannedFiles: m.files,
        splits: m.splits,
        openMs: m.openMs,
        planMs: m.planMs,
        planMsRuns: all.map((r) => r.planMs),
        planCpuMs: m.planCpuMs,
        // CPU figures: the median of each over the runs (on a shared machine they vary apart from the wall time).
        planMainCpuMs: medianOf(all, 'planMainCpuMs'),
        gcMinorMs: m.gcMinorMs,
        gcMajorMs: m.gcMajorMs,
        entriesPerCpuSec: (meta.manifestEntries / m.planCpuMs) * 1000,
        entriesPerSec: (meta.manifestEntries / m.planMs) * 1000,
        peakRssMiB: m.peakRssMiB,
        peakRssMiBRuns: all.map((r) => r.peakRssMiB),
        baseRssMiB: m.baseRssMiB,
        rssGrowthMiB: m.peakRssMiB - m.baseRssMiB,
        retainedHeapMiB: m.retainedHeapMiB,
        retainedArrayBuffersMiB: m.retainedArrayBuffersMiB,
        retainedKiBPerFile: (m.retainedHeapMiB * 1024) / meta.liveFiles,
        retainedExternalMiB: m.retainedExternalMiB,
        // Everything the plan keeps: heap plus buffers outside it (`external` includes array buffers).
        retainedWithBuffersKiBPerFile:
          ((m.retainedHeapMiB + Math.max(m.retainedArrayBuffersMiB, m.retainedExternalMiB ?? 0)) * 1024) / meta.liveFiles,
        warm: {
          planMs: warm.planMs,
          planMsRuns: warmRuns.map((r) => r.planMs),
          planCpuMs: medianOf(warmRuns, 'planCpuMs'),
          planMainCpuMs: medianOf(warmRuns, 'planMainCpuMs'),
          gcMinorMs: warm.gcMinorMs,
          gcMajorMs: warm.gcMajorMs,
          files: warm.files,
        },
        limits: {
          ...limits,
          decompressEntriesPerSec: rate(limits.decompressMs),
          walkEntriesPerSec: rate(limits.walkMs),
          decodeEntriesPerSec: rate(limits.decodeMs),
          decompressEntriesPerCpuSec: rate(limits.decompressCpuMs),
          walkEntriesPerCpuSec: rate(limits.walkCpuMs),
          decodeEntriesPerCpuSec: rate(limits.decodeCpuMs),
          decodeKeepEntriesPerCpuSec: limits.decodeKeepCpuMs == null ? null : rate(limits.decodeKeepCpuMs),
          cloneInEntriesPerCpuSec:
            limits.cloneInCpuMs == null ? null : ((limits.cloneEntries ?? limits.entries) / limits.cloneInCpuMs) * 1000,
          zstdBindingEntriesPerCpuSec: limits.zstdBindingCpuMs == null ? null : rate(limits.zstdBindingCpuMs),
          zstdCliEntriesPerSec: limits.zstdCliMs === null ? null : rate(limits.zstdCliMs),
        },
      });
    }
  }

  const reads = [];
  const skippedReads = [];
  for (const { size, meta } of tables) {
    if (planOnly || meta.liveFilesList === null || meta.liveFiles > readMaxFiles) {
      skippedReads.push(size);
      continue;
    }
    const readers = {
      tidemark: engineError === null ? { task: 'read-tidemark', args: { root: meta.root } } : null,
      duckdb: { task: 'read-duckdb', args: { liveFilesList: meta.liveFilesList } },
      parquetWasm: { task: 'read-parquet-wasm', args: { liveFilesList: meta.liveFilesList } },
    };
    const results = { tidemark: [], duckdb: [], parquetWasm: [] };
    const readRuns = meta.liveFiles > 10_000 ? Math.min(runs, largeReadRuns) : runs;
    // Interleaved so machine noise hits every reader alike.
    for (let i = 0; i < readRuns; i++) {
      for (const [reader, spec] of Object.entries(readers)) {
        if (spec === null) continue;
        log(`read ${size}: ${reader} run ${i + 1}/${readRuns}`);
        try {
          results[reader].push(await runChild(TASKS, spec.task, spec.args, { timeoutMs: 600_000 }));
        } catch (e) {
          problems.push(`read ${size} ${reader}: ${String(e.message).slice(0, 500)}`);
          readers[reader] = null;
        }
      }
    }
    const summary = { size, liveFiles: meta.liveFiles, liveRows: meta.liveRows, runs: readRuns };
    for (const [reader, all] of Object.entries(results)) {
      if (all.length === 0) continue;
      const m = medianRun(all, 'ms');
      summary[reader] = {
        ms: m.ms,
        msRuns: all.map((r) => r.ms),
        rows: m.rows,
        rowsPerSec: (m.rows / m.ms) * 1000,
        filesPerSec: (meta.liveFiles / m.ms) * 1000,
        peakRssMiB: m.peakRssMiB,
        idSum: m.idSum,
        ...(m.threads !== undefined ? { threads: m.threads } : {}),
        ...(m.batches !== undefined ? { batches: m.batches } : {}),
      };
      if (m.rows !== meta.liveRows) problems.push(`read ${size} ${reader}: ${m.rows} rows, table has ${meta.liveRows}`);
    }
    const sums = new Set(['tidemark', 'duckdb', 'parquetWasm'].filter((r) => summary[r]).map((r) => summary[r].idSum));
    if (sums.size > 1) problems.push(`read ${size}: readers disagree on sum(id): ${[...sums].join(' vs ')}`);
    if (summary.tidemark && summary.duckdb) summary.tidemarkVsDuckdb = summary.tidemark.rowsPerSec / summary.duckdb.rowsPerSec;
    if (summary.tidemark && summary.parquetWasm) {
      summary.tidemarkVsParquetWasm = summary.tidemark.rowsPerSec / summary.parquetWasm.rowsPerSec;
    }
    reads.push(summary);
  }

  const json = {
    benchmark: name,
    environment: environment(),
    options: { sizes, runs, readMaxFiles, largeReadRuns, planOnly, rowsPerFile: ROWS_PER_FILE, partitions: PARTITIONS },
    loadAverage: { before: loadBefore, after: os.loadavg() },
    tables: tables.map(({ size, meta }) => ({ size, ...meta })),
    engineError,
    planning,
    reads,
    skippedReads,
    problems,
    totalSeconds: (performance.now() - started) / 1000,
  };
  return { name, json, markdown: toMarkdown(json) };
}

function toMarkdown(r) {
  const out = [];
  const env = r.environment;
  out.push('# Read benchmark', '');
  out.push(
    `${env.date} · Node ${env.node} · ${env.cpu} × ${env.cores} · ${env.memoryGiB} GiB · ` +
      `${r.options.runs} fresh-process run(s) per figure, median shown (all runs in the JSON).`,
    '',
  );
  if (r.loadAverage) {
    out.push(
      `Load average (1 min) ${fmtNum(r.loadAverage.before[0], 1)} before and ${fmtNum(r.loadAverage.after[0], 1)} after the run ` +
        `on ${env.cores} cores: ${r.loadAverage.before[0] > env.cores / 2 || r.loadAverage.after[0] > env.cores / 2 ? 'the machine was shared with other jobs, so absolute times are inflated; compare ratios and rates within this run' : 'a quiet machine'}.`,
      '',
    );
  }
  out.push(headline(r), '');
  out.push('## Synthetic tables', '');
  out.push(
    `Append table, ${r.options.partitions} partitions (INT \`p\`), bucket-unaware, columns p INT, id BIGINT, ` +
      `name STRING, amount DOUBLE, ts TIMESTAMP(3); ${r.options.rowsPerFile} rows per data file (zstd Parquet, ` +
      `hard links to a few templates per partition). History: 8 APPEND snapshots, then a COMPACT snapshot ` +
      `that deletes 5 % of the first commit's files and adds replacements; no manifest merging, manifests ` +
      `roll at 8 MiB. Planning reads every manifest (base + delta) of the latest snapshot.`,
    '',
  );
  out.push(
    markdownTable(
      ['table', 'live files', 'rows', 'snapshots', 'manifests', 'manifest entries', 'manifest KiB'],
      r.tables.map((t) => [
        t.size,
        fmtInt(t.liveFiles),
        fmtInt(t.liveRows),
        t.snapshots,
        t.manifests,
        fmtInt(t.manifestEntries),
        fmtInt(t.manifestBytes / 1024),
      ]),
    ),
    '',
  );
  out.push('## Scan planning (`openTable` + `newRead().plan()`)', '');
  if (r.planning.length === 0) out.push(`Not measured: ${r.engineError ?? 'no engine'}.`, '');
  else {
    out.push(
      markdownTable(
        [
          'table',
          'planned files',
          'open ms',
          'plan ms',
          'entries decoded/s',
          'plan CPU ms',
          'main-thread CPU ms',
          'entries per CPU s',
          'warm plan ms (CPU, main thread)',
          'GC pauses ms (minor + major)',
          'peak RSS MiB',
          'RSS growth MiB',
          'heap retained by plan MiB',
          'retained KiB per live file',
          '+ buffers KiB per live file',
        ],
        r.planning.map((p) => [
          p.size,
          fmtInt(p.plannedFiles),
          fmtNum(p.openMs, 0),
          fmtNum(p.planMs, 0),
          fmtRate(p.entriesPerSec),
          p.planCpuMs === undefined ? '–' : fmtNum(p.planCpuMs, 0),
          p.planMainCpuMs == null ? '–' : fmtNum(p.planMainCpuMs, 0),
          p.entriesPerCpuSec === undefined ? '–' : fmtRate(p.entriesPerCpuSec),
          p.warm === undefined
            ? '–'
            : `${fmtNum(p.warm.planMs, 0)} (${fmtNum(p.warm.planCpuMs, 0)}, ${p.warm.planMainCpuMs == null ? '–' : fmtNum(p.warm.planMainCpuMs, 0)})`,
          p.gcMinorMs === undefined ? '–' : `${fmtNum(p.gcMinorMs, 0)} + ${fmtNum(p.gcMajorMs, 0)}`,
          fmtNum(p.peakRssMiB, 0),
          fmtNum(p.rssGrowthMiB, 0),
          fmtNum(p.retainedHeapMiB, 1),
          fmtNum(p.retainedKiBPerFile ?? (p.retainedHeapMiB * 1024) / p.plannedFiles, 2),
          p.retainedWithBuffersKiBPerFile === undefined ? '–' : fmtNum(p.retainedWithBuffersKiBPerFile, 2),
        ]),
      ),
      '',
      '*Plan CPU ms* = CPU time of every thread of the process during `plan()` (main thread, zstd in the ' +
        'libuv pool, GC helpers); on a shared machine it moves less with the load than the wall time. ' +
        '*Main-thread CPU ms* = the share of it on the JavaScript thread (Linux scheduler statistics). ' +
        '*Warm plan* = the same plan a second time in the same process (median of its own runs): JIT done, ' +
        'heap grown, zstd binding loaded, i.e. planning without the cold start of a fresh process. ' +
        '*GC pauses* = main-thread pauses of the collector during `plan()` (scavenges + mark-compacts), as the ' +
        '`gc` performance entries report them. ' +
        '*RSS growth* = peak RSS of the process minus its RSS right before `openTable` (after imports). ' +
        '*Heap retained* = heap still in use after planning and a forced GC, i.e. the plan result itself; ' +
        '*+ buffers* adds what the plan keeps outside the JS heap (its typed-array columns and the manifest blocks or arena its `_FILE` records are in: array buffers and native buffers, i.e. `process.memoryUsage().external`); the target is judged on this total.',
      '',
    );
    if (r.planning.some((p) => p.limits)) {
      out.push(
        '### Floors under planning',
        '',
        'On the same manifests, bytes already in memory, one process each: *decompress* = every Avro block ' +
          "through zstd and nothing else; *walk* = decompress plus a walk over every entry's bytes with no " +
          'object built (every entry dropped at its partition); *decode* = every entry decoded as planning ' +
          'does (stats left encoded), without folding or grouping; *decode + keep* = the same keeping every ' +
          'entry, as a plan must (the collector then copies survivors instead of dropping young garbage); ' +
          '*clone in* = `v8.deserialize` of every decoded entry, i.e. what the main thread would pay to receive ' +
          'decoded entries from a worker thread by `postMessage`; *plan* = the full planning figure above. ' +
          '*zstd binding* = `@mongodb-js/zstd` on the bare frames, one awaited at a time (no container parsing); ' +
          '*`zstd -d` command* = the same frames decompressed by the zstd command (process start included).',
        '',
        markdownTable(
          [
            'table',
            'entries',
            'blocks',
            'MiB zstd → MiB',
            '`zstd -d` command entries/s',
            'zstd binding entries per CPU s',
            'decompress entries/s (per CPU s)',
            'walk entries/s (per CPU s)',
            'decode entries/s (per CPU s)',
            'decode + keep entries per CPU s',
            'clone in entries per CPU s',
            'plan entries/s (per CPU s)',
          ],
          r.planning
            .filter((p) => p.limits)
            .map((p) => [
              p.size,
              fmtInt(p.limits.entries),
              fmtInt(p.limits.blocks),
              `${fmtNum(p.limits.compressedBytes / 2 ** 20, 1)} → ${fmtNum(p.limits.decompressedBytes / 2 ** 20, 1)}`,
              p.limits.zstdCliEntriesPerSec == null ? '–' : fmtRate(p.limits.zstdCliEntriesPerSec),
              p.limits.zstdBindingEntriesPerCpuSec == null ? '–' : fmtRate(p.limits.zstdBindingEntriesPerCpuSec),
              `${fmtRate(p.limits.decompressEntriesPerSec)} (${fmtRate(p.limits.decompressEntriesPerCpuSec)})`,
              `${fmtRate(p.limits.walkEntriesPerSec)} (${fmtRate(p.limits.walkEntriesPerCpuSec)})`,
              `${fmtRate(p.limits.decodeEntriesPerSec)} (${fmtRate(p.limits.decodeEntriesPerCpuSec)})`,
              p.limits.decodeKeepEntriesPerCpuSec == null ? '–' : fmtRate(p.limits.decodeKeepEntriesPerCpuSec),
              p.limits.cloneInEntriesPerCpuSec == null ? '–' : fmtRate(p.limits.cloneInEntriesPerCpuSec),
              `${fmtRate(p.entriesPerSec)} (${p.entriesPerCpuSec === undefined ? '–' : fmtRate(p.entriesPerCpuSec)})`,
            ]),
        ),
        '',
      );
    }
    const limitLines = planningLimits(r.planning);
    if (limitLines.length > 0) out.push('What limits planning (from the figures above):', '', ...limitLines, '');
    if (r.planning.length > 1) {
      const lines = [];
      for (let i = 1; i < r.planning.length; i++) {
        const a = r.planning[i - 1];
        const b = r.planning[i];
        const perFile = ((b.rssGrowthMiB - a.rssGrowthMiB) * 1024) / (b.liveFiles - a.liveFiles);
        lines.push(
          `- ${a.size} → ${b.size}: files ×${fmtNum(b.liveFiles / a.liveFiles, 0)}, RSS growth ` +
            `${fmtNum(a.rssGrowthMiB, 0)} → ${fmtNum(b.rssGrowthMiB, 0)} MiB (×${fmtNum(b.rssGrowthMiB / a.rssGrowthMiB, 1)}, ` +
            `${fmtNum(perFile, 2)} KiB per extra live file), plan time ×${fmtNum(b.planMs / a.planMs, 1)}`,
        );
      }
      out.push('RSS and time growth with the number of files:', '', ...lines, '');
    }
  }
  out.push('## Full read', '');
  out.push(
    '- **tidemark**: `openTable` + `newRead().batches()` of the latest snapshot (planning included), summing `id`.',
    '- **DuckDB**: `read_parquet([...live file paths])` with an aggregate over every column (count, sum(id), ' +
      'sum(length(name)), sum(amount), max(ts), sum(p)); native code, ' +
      `${r.reads.find((x) => x.duckdb)?.duckdb.threads ?? '?'} threads, result not materialised in JS.`,
    '- **parquet-wasm**: per live file `fs.readFile` + `readParquet` + IPC into an apache-arrow Table, summing `id` ' +
      '(the raw decode path without table logic).',
    '- Ratios are tidemark rows/s ÷ baseline rows/s from the same invocation (runs interleaved).',
    '',
  );
  if (r.options.planOnly) out.push('Full reads not measured in this run (`--plan-only`).', '');
  else if (r.skippedReads.length > 0) {
    const noData = r.tables.filter((t) => t.liveFilesList === null).map((t) => t.size);
    const capped = r.skippedReads.filter((x) => !noData.includes(x));
    if (noData.length > 0) out.push(`Not read: ${noData.join(', ')} (generated without data files, for planning only).`, '');
    if (capped.length > 0) {
      out.push(
        `Full reads capped at ${fmtInt(r.options.readMaxFiles)} files: not measured for ${capped.join(', ')} ` +
          '(pass `--read-max-files 100000` to include them).',
        '',
      );
    }
  }
  const cell = (x) => (x ? `${fmtNum(x.ms, 0)} ms · ${fmtRate(x.rowsPerSec)} rows/s · ${fmtNum(x.peakRssMiB, 0)} MiB` : '–');
  out.push(
    markdownTable(
      ['table', 'rows', 'tidemark', 'DuckDB read_parquet', 'parquet-wasm', 'tidemark ÷ DuckDB', 'tidemark ÷ parquet-wasm'],
      r.reads.map((x) => [
        x.size,
        fmtInt(x.liveRows),
        cell(x.tidemark),
        cell(x.duckdb),
        cell(x.parquetWasm),
        x.tidemarkVsDuckdb === undefined ? '–' : fmtNum(x.tidemarkVsDuckdb, 3),
        x.tidemarkVsParquetWasm === undefined ? '–' : fmtNum(x.tidemarkVsParquetWasm, 2),
      ]),
    ),
    '',
    'Cells: median wall time · rows/s · peak RSS of the process. Runs per reader: ' +
      r.reads.map((x) => `${x.size} ${x.runs}`).join(', ') +
      ` (tables above 10k files are read ${r.options.largeReadRuns}× to keep the benchmark under ~10 minutes).`,
    '',
  );
  if (r.problems.length > 0) out.push('## Problems seen', '', ...r.problems.map((p) => `- ${p}`), '');
  out.push(`Total benchmark time: ${fmtNum(r.totalSeconds, 0)} s.`);
  return out.join('\n');
}

/** Median of a numeric field over runs, null when no run has it. */
function medianOf(runs, key) {
  const values = runs.map((r) => r[key]).filter((v) => typeof v === 'number');
  return values.length === 0 ? null : median(values);
}

/**
 * Names what bounds planning speed, per CPU second so a shared machine's load cancels out: how the
 * full plan compares with decoding alone and with the bare walk over the entry bytes, and how the
 * Node zstd binding compares with the zstd command on the same frames.
 */
function planningLimits(planning) {
  const usable = planning.filter((x) => x.limits && x.entriesPerCpuSec !== undefined);
  const p = usable.find((x) => x.liveFiles === 1_000_000) ?? usable.find((x) => x.liveFiles === 100_000) ?? usable[usable.length - 1];
  if (!p) return [];
  const l = p.limits;
  const lines = [
    `- ${p.size}: ${fmtNum(p.planMs, 0)} ms wall, ${fmtNum(p.planCpuMs, 0)} ms CPU over all threads` +
      (p.planMainCpuMs == null ? '' : `, ${fmtNum(p.planMainCpuMs, 0)} ms of it on the main thread`) +
      `; ${fmtNum(p.retainedWithBuffersKiBPerFile, 2)} KiB retained per live file (heap and buffers).`,
    `- Per CPU second: the full plan handles ${fmtRate(p.entriesPerCpuSec)} entries; the bare walk over the entry bytes ` +
      `(zstd included, no object built) ${fmtRate(l.walkEntriesPerCpuSec)}; decoding every entry into the public ` +
      `\`ManifestEntry\` shape and dropping it ${fmtRate(l.decodeEntriesPerCpuSec)}, keeping it ${fmtRate(l.decodeKeepEntriesPerCpuSec)}. ` +
      'A plan walks entries and keeps each live file as a row of typed-array columns plus its `_FILE` record bytes in the ' +
      "manifest block (decoded into a `DataFileMeta` only when a split's files are read), so it builds no object per " +
      'entry: plan minus walk is the fold (hashing each name, the identity table, the columns) and the cold start.',
  ];
  if (p.planMainCpuMs != null) {
    const others = p.planCpuMs - p.planMainCpuMs;
    lines.push(
      `- The main thread: ${fmtNum(p.planMainCpuMs, 0)} ms of the ${fmtNum(p.planCpuMs, 0)} ms CPU (the other ` +
        `${fmtNum(others, 0)} ms: zstd in the libuv pool, the collector's helper threads, background JIT compilation). ` +
        'Walking and folding are JavaScript on that one thread, so the wall time cannot go below it; ' +
        `${fmtNum(p.planMs - p.planMainCpuMs, 0)} ms of the wall time was waiting (for a core on a shared machine, for zstd).`,
    );
  }
  if (p.warm) {
    const w = p.warm;
    lines.push(
      `- Cold start: planned a second time in the same process (JIT done, heap grown, zstd binding loaded) the plan ` +
        `takes ${fmtNum(w.planMs, 0)} ms wall, ${fmtNum(w.planCpuMs, 0)} ms CPU` +
        (w.planMainCpuMs == null ? '' : `, ${fmtNum(w.planMainCpuMs, 0)} ms on the main thread`) +
        `; a fresh process's first plan pays ${fmtNum(p.planCpuMs - w.planCpuMs, 0)} ms CPU more` +
        (w.planMainCpuMs == null || p.planMainCpuMs == null
          ? ''
          : ` (${fmtNum(p.planMainCpuMs - w.planMainCpuMs, 0)} ms of it on the main thread)`) +
        '.',
    );
  }
  if (p.gcMinorMs !== undefined) {
    lines.push(
      `- The collector paused the main thread ${fmtNum(p.gcMinorMs + p.gcMajorMs, 0)} ms of the ${fmtNum(p.planMs, 0)} ms ` +
        `plan (${fmtNum(p.gcMinorMs, 0)} ms scavenging, ${fmtNum(p.gcMajorMs, 0)} ms mark-compact). The plan keeps no object ` +
        'per file (its heap share stays a few MiB); the mark-compacts come from the decompressed blocks, native memory ' +
        'V8 is told about, which starts a full collection every few tens of MiB however small the heap.',
    );
  }
  if (l.zstdBindingEntriesPerCpuSec) {
    lines.push(
      `- zstd: the Node binding decompresses the frames of ${fmtRate(l.zstdBindingEntriesPerCpuSec)} entries per CPU ` +
        `second (${fmtNum(l.zstdBindingCpuMs, 0)} ms CPU for all, off the main thread), ` +
        (l.zstdCliEntriesPerSec ? `the zstd command ${fmtRate(l.zstdCliEntriesPerSec)} per second with its process start. ` : '. ') +
        'On 2 cores it competes with the main thread for CPU.',
    );
  }
  return lines;
}

/** One table with the figures the issue asks for (quoted by SUMMARY.md, which takes the first table). */
function headline(r) {
  const rows = r.tables.map((t) => {
    const p = r.planning.find((x) => x.size === t.size);
    const x = r.reads.find((y) => y.size === t.size);
    return [
      t.size,
      fmtInt(t.liveFiles),
      p ? fmtNum(p.planMs, 0) : '–',
      p ? fmtRate(p.entriesPerSec) : '–',
      p ? fmtNum(p.peakRssMiB, 0) : '–',
      p ? fmtNum(p.retainedWithBuffersKiBPerFile ?? (p.retainedHeapMiB * 1024) / p.liveFiles, 2) : '–',
      x?.tidemark ? fmtRate(x.tidemark.rowsPerSec) : '–',
      x?.duckdb ? fmtRate(x.duckdb.rowsPerSec) : '–',
      x?.tidemarkVsDuckdb === undefined ? '–' : fmtNum(x.tidemarkVsDuckdb, 3),
      x?.parquetWasm ? fmtRate(x.parquetWasm.rowsPerSec) : '–',
    ];
  });
  return markdownTable(
    [
      'table',
      'live files',
      'plan ms',
      'manifest entries/s',
      'plan peak RSS MiB',
      'plan retained KiB per live file',
      'tidemark rows/s',
      'DuckDB rows/s',
      'tidemark ÷ DuckDB',
      'parquet-wasm rows/s',
    ],
    rows,
  );
}

await runStandalone(
  import.meta.url,
  run,
  {
    '--sizes': ['sizes', 'strings'],
    '--runs': 'runs',
    '--read-max-files': 'readMaxFiles',
    '--large-read-runs': 'largeReadRuns',
    '--plan-only': ['planOnly', 'flag'],
  },
  { s3: false },
);
