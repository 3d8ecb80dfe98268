/**
 * Primary-key write benchmark: upserts/s of N rows (30 % of them updates of earlier keys) into a
 * primary-key table with 4 buckets, against appends/s of the same rows into an append table with 4
 * buckets, measured in the same run (rounds interleave the two, each in a fresh child process with
 * its peak RSS; see lib/pk-tasks.mjs). Then the upsert's peak RSS at two `write-buffer-size`
 * settings, to show that the writer's memory is bounded by its buffer.
 *
 *   node benchmarks/pk.bench.mjs [--rows 1000000] [--runs 3] [--buffers 8mb,32mb]
 *
 * Results go to benchmarks/results/pk.json and pk.md. Imports the BUILT packages.
 */
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
      ['writer', 'rows', 'ms median (runs)', 'rows/s', 'CPU ms', 'files', 'file MiB', 'RSS before MiB', 'peak RSS MiB'],
      [row('upsert into primary-key table (4 buckets)', json.upsert), row('append into append table (4 buckets)', json.append)],
    ),
    '',
    `Upsert ÷ append wall time: ${fmtNum(json.upsertOverAppendTime, 2)} (median of per-round ratios ${json.upsertOverAppendTimeRuns.map((x) => fmtNum(x, 2)).join(' / ')}); CPU time: ${fmtNum(json.upsert.cpuMs / json.append.cpuMs, 2)} (median CPU ms; the steadier figure on this shared machine).`,
    '',
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
    '- Machine: 2 shared cores with other jobs running; compare ratios from the same run.',
    ...problemsSection(json.problems),
  ].join('\n');
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
