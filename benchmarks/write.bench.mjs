/**
 * Write-path benchmark: append throughput of tidemark from Arrow input, against the same
 * rows written by raw parquet-wasm alone and by DuckDB `COPY … TO` Parquet, as ratios measured in
 * one run (rounds interleave the writers, each measurement in a fresh child process with its peak
 * RSS; see lib/write-tasks.mjs).
 *
 *   node benchmarks/write.bench.mjs [--sizes 1m,10m] [--runs 5] [--large-runs 1] [--no-partitioned]
 *
 * Data (lib/write-data.mjs, libraries.md §2 shape): id BIGINT, name STRING (16 chars, unique),
 * amount DOUBLE, ts TIMESTAMP(3), dt STRING (30 values in sorted runs), fed as 100,000-row
 * RecordBatches. Main table: unpartitioned append table (bucket -1, default options: zstd,
 * target-file-size 256 MiB, write-buffer-size 256 MiB). Extra rows: the same table partitioned by
 * dt (30 partitions → 30 files). The raw parquet-wasm baseline writes the same file layout (the row
 * counts tidemark's files got in the same round) so file count and size do not skew the ratio.
 * Results go to benchmarks/results/write.json and write.md. Imports the BUILT packages.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { median, runChild } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, fmtRate, markdownTable, problemsSection, runLine } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'write';

const TASKS = new URL('./lib/write-tasks.mjs', import.meta.url);
const SIZES = { '1m': 1_000_000, '10m': 10_000_000 };
const MIB = 2 ** 20;
const TIMEOUT_MS = 900_000;

/**
 * @typedef {object} WriteBenchOptions
 * @property {string[]} [sizes]          subset of '1m', '10m' (default both)
 * @property {number} [runs]             rounds for sizes up to 1M rows (default 5)
 * @property {number} [largeRuns]        rounds for 10M rows (default 1)
 * @property {boolean} [partitioned]     also measure the dt-partitioned table (default true; 1M only)
 * @property {(msg: string) => void} [log]
 */

/**
 * @param {WriteBenchOptions} [options]
 * @returns {Promise<{ name: string, json: object, markdown: string }>}
 */
export async function run(options = {}) {
  const sizes = options.sizes ?? Object.keys(SIZES);
  const runs = options.runs ?? 5;
  const largeRuns = options.largeRuns ?? 1;
  const withPartitioned = options.partitioned ?? true;
  const log = options.log ?? ((m) => console.error(m));
  const started = performance.now();
  const workDir = path.join(WORK_DIR, 'write');
  const problems = [];
  const cases = [];

  for (const size of sizes) {
    const rows = SIZES[size];
    if (rows === undefined) throw new Error(`unknown size '${size}' (use ${Object.keys(SIZES).join(', ')})`);
    const ipcPath = path.join(workDir, `input-${size}.arrow`);
    log(`${size}: preparing the Arrow input (cached at ${ipcPath})`);
    const input = await runChild(TASKS, 'prepare', { ipcPath, rows }, { timeoutMs: TIMEOUT_MS });
    const variants = [{ partitioned: false }];
    if (withPartitioned && rows <= 1_000_000) variants.push({ partitioned: true });
    for (const { partitioned } of variants) {
      const label = `${size}${partitioned ? ' partitioned by dt' : ''}`;
      const rounds = rows > 1_000_000 ? largeRuns : runs;
      const out = { tidemark: [], raw: [], duckdb: [] };
      let lastDirs;
      for (let r = 0; r < rounds; r++) {
        const dir = path.join(workDir, `out-${size}-${partitioned ? 'p' : 'u'}-${r}`);
        await rm(dir, { recursive: true, force: true });
        const dirs = { tidemark: path.join(dir, 'tidemark'), raw: path.join(dir, 'raw'), duckdb: path.join(dir, 'duckdb', 'data.parquet') };
        log(`${label}: round ${r + 1}/${rounds}: tidemark`);
        const t = await runChild(TASKS, 'tidemark', { ipcPath, rows, warehouse: dirs.tidemark, partitioned }, { timeoutMs: TIMEOUT_MS });
        out.tidemark.push(t);
        log(`${label}: round ${r + 1}/${rounds}: raw parquet-wasm (${t.fileRows.length} file(s), same row counts)`);
        out.raw.push(
          await runChild(TASKS, 'parquet-wasm', { ipcPath, rows, outDir: dirs.raw, fileRows: t.fileRows }, { timeoutMs: TIMEOUT_MS }),
        );
        if (!partitioned) {
          log(`${label}: round ${r + 1}/${rounds}: DuckDB COPY`);
          out.duckdb.push(await runChild(TASKS, 'duckdb', { rows, outPath: dirs.duckdb }, { timeoutMs: TIMEOUT_MS }));
        }
        if (lastDirs) await rm(lastDirs.root, { recursive: true, force: true });
        lastDirs = { root: dir, ...dirs };
      }
      log(`${label}: verifying that every writer's files hold the same rows (DuckDB aggregates)`);
      const sources = { tidemark: lastDirs.tidemark, raw: lastDirs.raw };
      if (!partitioned) sources.duckdb = lastDirs.duckdb;
      const verify = await runChild(TASKS, 'verify', { rows, sources }, { timeoutMs: TIMEOUT_MS });
      if (verify.mismatches.length > 0) problems.push(`${label}: ${verify.mismatches.join(', ')} differ from the reference aggregates`);
      await rm(lastDirs.root, { recursive: true, force: true });
      const summary = summarise(label, size, rows, partitioned, input.arrowBytes, out, verify);
      const groups = out.tidemark.at(-1)?.rowGroups;
      if (!partitioned && rows <= 1_000_000 && groups > 1) {
        log(`${label}: encoding in one row group vs ${groups} on one thread (the price of the parallel cut)`);
        const r = await runChild(TASKS, 'split-cost', { ipcPath, rows, groups, runs: 3 }, { timeoutMs: TIMEOUT_MS });
        summary.splitCost = {
          groups,
          oneGroupCpuMs: median(r.one.map((x) => x.cpuMs)),
          splitCpuMs: median(r.split.map((x) => x.cpuMs)),
          oneGroupBytes: r.one[0].bytes,
          splitBytes: r.split[0].bytes,
        };
      }
      cases.push(summary);
    }
  }

  const json = {
    name,
    description:
      'Append write throughput from Arrow input: tidemark (newBatchWrite + write per batch + prepareCommit + commit) vs raw parquet-wasm (same batches, same file layout) vs DuckDB COPY TO parquet (zstd), each in a fresh process.',
    environment: environment(),
    totalSeconds: (performance.now() - started) / 1000,
    cases,
    problems,
  };
  return { name, json, markdown: toMarkdown(json) };
}

function stats(list, key) {
  return { median: median(list.map((x) => x[key])), runs: list.map((x) => x[key]) };
}

function summarise(label, size, rows, partitioned, arrowBytes, out, verify) {
  const writer = (list) => {
    if (list.length === 0) return null;
    const ms = stats(list, 'ms');
    return {
      ms: ms.median,
      msRuns: ms.runs,
      rowsPerSec: (rows / ms.median) * 1000,
      arrowMiBPerSec: arrowBytes / MIB / (ms.median / 1000),
      files: list[0].files,
      fileMiB: median(list.map((x) => x.fileBytes)) / MIB,
      cpuMs: median(list.map((x) => x.cpuMs)),
      cpuMsRuns: list.map((x) => x.cpuMs),
      peakRssMiB: median(list.map((x) => x.peakRssMiB)),
      peakRssMiBRuns: list.map((x) => x.peakRssMiB),
      baseRssMiB: median(list.map((x) => x.baseRssMiB)),
      ...(list[0].writeMs !== undefined
        ? { writeMs: median(list.map((x) => x.writeMs)), commitMs: median(list.map((x) => x.commitMs)), fileRows: list[0].fileRows }
        : {}),
      ...(list[0].threads !== undefined ? { threads: list[0].threads } : {}),
    };
  };
  const perRound = (a, b) => a.map((x, i) => (b[i] ? x.ms / b[i].ms : NaN)).filter((x) => !Number.isNaN(x));
  const vsRaw = perRound(out.tidemark, out.raw);
  const vsDuck = perRound(out.tidemark, out.duckdb);
  return {
    label,
    size,
    rows,
    partitioned,
    rounds: out.tidemark.length,
    arrowMiB: arrowBytes / MIB,
    tidemark: writer(out.tidemark),
    parquetWasm: writer(out.raw),
    duckdb: writer(out.duckdb),
    // time ratios per round (tidemark ms ÷ baseline ms), median over rounds
    tidemarkOverRawTime: vsRaw.length ? median(vsRaw) : null,
    tidemarkOverRawTimeRuns: vsRaw,
    tidemarkOverDuckdbTime: vsDuck.length ? median(vsDuck) : null,
    tidemarkOverDuckdbTimeRuns: vsDuck,
    // the same from the medians and from the fastest runs (the least disturbed by other load)
    tidemarkOverRawMedians: median(out.tidemark.map((x) => x.ms)) / median(out.raw.map((x) => x.ms)),
    tidemarkOverRawFastest: Math.min(...out.tidemark.map((x) => x.ms)) / Math.min(...out.raw.map((x) => x.ms)),
    // CPU time (user + system) is far less sensitive to other load on the machine than wall time
    tidemarkOverRawCpu: median(out.tidemark.map((x) => x.cpuMs)) / median(out.raw.map((x) => x.cpuMs)),
    verified: verify.mismatches.length === 0,
    aggregates: verify.aggregates.reference,
  };
}

export function toMarkdown(json) {
  const e = json.environment;
  const pct = (r) => (r === null || r === undefined ? '–' : `${r >= 1 ? '+' : ''}${fmtNum((r - 1) * 100, 0)} %`);
  const ratio = (r) => (r === null || r === undefined ? '–' : fmtNum(r, 2));
  const summary = json.cases.map((c) => [
    c.label,
    fmtInt(c.rows),
    c.rounds,
    `${fmtRate(c.tidemark.rowsPerSec)} · ${fmtNum(c.tidemark.arrowMiBPerSec, 1)}`,
    `${fmtRate(c.parquetWasm.rowsPerSec)} · ${fmtNum(c.parquetWasm.arrowMiBPerSec, 1)}`,
    c.duckdb ? `${fmtRate(c.duckdb.rowsPerSec)} · ${fmtNum(c.duckdb.arrowMiBPerSec, 1)}` : '–',
    `${ratio(c.tidemarkOverRawTime)} (${pct(c.tidemarkOverRawTime)})`,
    c.rounds > 1 ? `${ratio(c.tidemarkOverRawMedians)} / ${ratio(c.tidemarkOverRawFastest)}` : '–',
    `${ratio(c.tidemarkOverRawCpu)} (${pct(c.tidemarkOverRawCpu)})`,
    ratio(c.tidemarkOverDuckdbTime),
    c.verified ? 'yes' : '**NO**',
  ]);
  const detailRows = [];
  for (const c of json.cases) {
    for (const [who, w] of [
      ['tidemark', c.tidemark],
      ['raw parquet-wasm', c.parquetWasm],
      ['DuckDB COPY', c.duckdb],
    ]) {
      if (!w) continue;
      detailRows.push([
        c.label,
        who,
        `${fmtInt(w.ms)} (${w.msRuns.map((x) => fmtInt(x)).join(' / ')})`,
        `${fmtInt(w.cpuMs)} (${w.cpuMsRuns.map((x) => fmtInt(x)).join(' / ')})`,
        w.writeMs !== undefined ? `${fmtInt(w.writeMs)} + ${fmtInt(w.commitMs)}` : '',
        fmtRate(w.rowsPerSec),
        fmtNum(w.arrowMiBPerSec, 1),
        w.files,
        fmtNum(w.fileMiB, 1),
        fmtInt(w.baseRssMiB),
        `${fmtInt(w.peakRssMiB)}${w.peakRssMiBRuns.length > 1 ? ` (${w.peakRssMiBRuns.map((x) => fmtInt(x)).join(' / ')})` : ''}`,
      ]);
    }
  }
  const layouts = json.cases.map((c) => {
    const rowsPerFile = c.tidemark.fileRows;
    const shown =
      rowsPerFile.length <= 4
        ? rowsPerFile.map((x) => fmtInt(x)).join(', ')
        : `${rowsPerFile.length} files of ${fmtInt(Math.min(...rowsPerFile))}–${fmtInt(Math.max(...rowsPerFile))} rows`;
    return `- ${c.label}: Arrow input ${fmtNum(c.arrowMiB, 1)} MiB; tidemark files (rows): ${shown}.`;
  });
  return [
    '# Write benchmark',
    '',
    runLine(e, json.totalSeconds),
    '',
    'Cells: rows/s · MiB/s of in-memory Arrow input (median run). Ratio = tidemark wall time ÷ raw parquet-wasm wall time in the same round (median over rounds; all per-round ratios in the JSON), also given as ratio of the median times and of the fastest times (the runs least disturbed by other load); the target is at most 1.1, and tidemark ÷ DuckDB COPY at most 2 (at least half the speed of DuckDB). CPU time = user + system time of the writer process during the timed part (all its threads); it is much less disturbed by other load on this shared machine than wall time, so the CPU ratio is the most reliable overhead figure.',
    '',
    markdownTable(
      [
        'case',
        'rows',
        'rounds',
        'tidemark',
        'raw parquet-wasm',
        'DuckDB COPY (2 threads)',
        'tidemark ÷ raw (time)',
        'tidemark ÷ raw: of medians / of fastest runs',
        'tidemark ÷ raw CPU time',
        'tidemark ÷ DuckDB (time)',
        'same rows',
      ],
      summary,
    ),
    '',
    '## Details',
    '',
    markdownTable(
      [
        'case',
        'writer',
        'ms median (runs)',
        'CPU ms median (runs)',
        'tidemark write + commit ms',
        'rows/s',
        'Arrow MiB/s',
        'files',
        'file MiB',
        'RSS before MiB',
        'peak RSS MiB (runs)',
      ],
      detailRows,
    ),
    '',
    '*RSS before* = RSS after imports and loading the input (the Arrow input is an IPC file read into memory; DuckDB: after building its in-memory table), i.e. the baseline the peak grows from.',
    '',
    '## What is measured',
    '',
    '- Data (benchmarks/lib/write-data.mjs): id BIGINT = i, name STRING = 16-char unique permuted string, amount DOUBLE, ts TIMESTAMP(3), dt STRING with 30 values in sorted runs; 100,000-row RecordBatches loaded from a cached Arrow IPC file (not timed).',
    '- **tidemark**: `FileSystemCatalog.createTable` (not timed), then timed: `table.newBatchWrite()`, one `write(batch)` per input batch, `prepareCommit()`, `table.newCommit().commit()`; local disk, every file fsynced (LocalFileIO). Main case: unpartitioned append table (bucket -1) with default options (zstd, target-file-size 256 MiB, write-buffer-size 256 MiB); each file is cut into row groups of at most 1,048,576 rows, encoded on the Parquet worker pool (2 workers) at once: full rounds of one group per worker whole, and every later group (here the only group of a 1M-row file) with its columns split between the workers by estimated encode cost, the column chunks stitched into one row group (copied as they are, footer rewritten); the groups are joined by rewriting the footer; the "partitioned by dt" case: same table with `dt` as partition key (30 partitions, one file each).',
    "- **raw parquet-wasm**: the same Arrow batches, sliced into files with the row counts tidemark produced in that round, each `tableToIPC(stream)` → `pw.Table.fromIPCStream` → `pw.writeParquet` with ZSTD (level 1, fixed in parquet-wasm) and column-chunk statistics (the library's settings), then written and fsynced. No validation, no value statistics, no manifests, no snapshot.",
    "- **DuckDB**: `CREATE TABLE t AS SELECT …` the same values (not timed), then timed `COPY t TO '…parquet' (FORMAT parquet, COMPRESSION zstd)` (zstd level 3, native, 2 threads), one file.",
    '- Same rows: after the last round DuckDB computed count, sum(id), sum(amount·100), hash sums of name/dt, distinct counts and sum(ts) over each writer\'s files and over the generating SELECT; "yes" = all equal.',
    ...layouts,
    ...json.cases
      .filter((c) => c.splitCost)
      .map(
        (c) =>
          `- Price of the parallel cut (${c.label}): on one thread, parquet-wasm encodes the rows as ${c.splitCost.groups} row ` +
          `groups in ${fmtNum(c.splitCost.splitCpuMs, 0)} ms CPU (${fmtNum(c.splitCost.splitBytes / MIB, 1)} MiB) against ` +
          `${fmtNum(c.splitCost.oneGroupCpuMs, 0)} ms (${fmtNum(c.splitCost.oneGroupBytes / MIB, 1)} MiB) as one group ` +
          `(× ${fmtNum(c.splitCost.splitCpuMs / c.splitCost.oneGroupCpuMs, 2)}): each group restarts the dictionaries that ` +
          'the unique columns fill and then abandon. This is a floor of the CPU-time ratio above; it pays off in wall time ' +
          'only when a second core is free, which on this loaded machine it mostly was not.',
      ),
    ...json.cases
      .filter((c) => c.duckdb && c.parquetWasm && c.tidemark)
      .map(
        (c) =>
          `- Limit of tidemark ÷ DuckDB (${c.label}): DuckDB's COPY took ${fmtNum(c.duckdb.ms, 0)} ms (${fmtNum(c.duckdb.cpuMs, 0)} ms ` +
          `CPU), so half its speed allows ${fmtNum(2 * c.duckdb.ms, 0)} ms. parquet-wasm alone needs ${fmtNum(c.parquetWasm.cpuMs, 0)} ms ` +
          `of CPU to encode these rows (raw, one thread), ${fmtNum(c.parquetWasm.cpuMs / c.duckdb.cpuMs, 1)} × DuckDB's work, and ` +
          `tidemark's write ${fmtNum(c.tidemark.cpuMs, 0)} ms; spread perfectly over 2 cores that is at least ` +
          `${fmtNum(c.parquetWasm.cpuMs / 2, 0)} ms of wall time, so tidemark ÷ DuckDB can reach at most ` +
          `${fmtNum((2 * c.duckdb.ms) / c.parquetWasm.cpuMs, 2)} (${fmtNum((2 * c.duckdb.ms) / c.tidemark.cpuMs, 2)} with tidemark's own CPU) ` +
          'while encoding with parquet-wasm: the encoder, not the table logic, is the limit.',
      ),
    '- Machine: 2 cores shared with several other agents running builds, tests and benchmarks at the same time (load average far above 2), so wall times are noisy and single figures can be off by a factor; ratios come from interleaved rounds, and the CPU-time ratio is the figure least disturbed by the load (raw runs are in the Details table and the JSON).',
    ...problemsSection(json.problems),
  ].join('\n');
}

await runStandalone(
  import.meta.url,
  run,
  {
    '--sizes': ['sizes', 'strings'],
    '--runs': 'runs',
    '--large-runs': 'largeRuns',
    '--no-partitioned': ['partitioned', 'off'],
  },
  { s3: false },
);
