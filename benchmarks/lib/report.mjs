/**
 * Result output shared by the benchmarks: number formatting, markdown tables, and writing
 * `benchmarks/results/<name>.json` + `<name>.md`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** `benchmarks/results/`. */
export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
/** `benchmarks/work/` (gitignored; generated tables are cached here). */
export const WORK_DIR = fileURLToPath(new URL('../work/', import.meta.url));

/** Integer with thousands separators; '–' for missing. */
export function fmtInt(n) {
  return n === undefined || n === null || Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US');
}

/** Fixed decimals; '–' for missing. */
export function fmtNum(n, digits = 1) {
  return n === undefined || n === null || Number.isNaN(n) ? '–' : n.toFixed(digits);
}

/** Rate with a k/M suffix (e.g. 1.52M). */
export function fmtRate(n) {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(0);
}

/**
 * A GitHub markdown table.
 *
 * @param {string[]} headers
 * @param {Array<Array<string | number>>} rows
 */
export function markdownTable(headers, rows) {
  const line = (cells) => `| ${cells.map((c) => String(c)).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Machine and runtime facts recorded next to every result. */
export function environment() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    date: new Date().toISOString(),
  };
}

/**
 * Writes `results/<name>.json` and `results/<name>.md`.
 *
 * @returns {Promise<{ json: string, md: string }>} the two paths
 */
export async function writeResults(name, json, markdown) {
  await mkdir(RESULTS_DIR, { recursive: true });
  const jsonPath = path.join(RESULTS_DIR, `${name}.json`);
  const mdPath = path.join(RESULTS_DIR, `${name}.md`);
  await writeFile(jsonPath, JSON.stringify(json, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
  await writeFile(mdPath, markdown.endsWith('\n') ? markdown : markdown + '\n');
  return { json: jsonPath, md: mdPath };
}

/** The "Problems" section closing a result's markdown: lines to spread in, none when there are no problems. */
export function problemsSection(problems) {
  return problems.length ? ['', '## Problems', '', ...problems.map((p) => `- ${p}`)] : [];
}

/**
 * The markdown note on the S3 rows: where the server ran (`json.s3` of a result), or that they were
 * skipped. `detail` is added to the sentence (e.g. what the S3 figures include).
 */
export function s3Note(s3, detail = '') {
  return s3
    ? `- s3 = Ceph RGW (memstore OSD) at ${s3.endpoint} on the same machine: loopback network, CPU shared with the client${detail}.`
    : '- S3 rows skipped: no S3 server configured.';
}

/** The markdown note on the machine every result carries. */
export const SHARED_MACHINE_NOTE =
  '- Machine: 2 cores shared with other jobs running (other agents, tests, S3 servers); treat single figures as ±30 %.';

/**
 * The closing lines of a result's Markdown: the note on its S3 rows, the note on the machine
 * (`machineNote`, by default {@link SHARED_MACHINE_NOTE}) and its problems, if any.
 */
export function closingNotes(json, machineNote = SHARED_MACHINE_NOTE) {
  return [s3Note(json.s3), machineNote, ...problemsSection(json.problems)];
}

/** The `machine` of benchmarks that count requests: the times vary with the shared machine, the counts do not. */
export const SHARED_MACHINE_COUNTS =
  'shared: 2 cores used by several agents at once; times are indicative (±30 %), request counts are exact';

/** The first lines of a result's Markdown: its title, when it ran, its total time and (when given) its machine. */
export function resultHeading(title, json) {
  const machine = json.machine === undefined ? '' : ` Machine: ${json.machine}.`;
  return [`# ${title}`, '', `Run ${json.date}; total ${fmtNum(json.seconds)} s.${machine}`, ''];
}

/**
 * The JSON of a result: its name, date and environment, the benchmark's own `fields` (in their
 * order), the run's seconds since `started` and the S3 endpoint when the harness gave one.
 */
export function resultJson(name, options, started, fields) {
  return {
    name,
    date: new Date().toISOString(),
    environment: environment(),
    ...fields,
    seconds: (performance.now() - started) / 1000,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : undefined,
  };
}

/**
 * The JSON of a result that describes itself (`description`) and counts its time as
 * `totalSeconds`: the benchmark's own `fields` follow, then the S3 endpoint (null without S3).
 */
export function describedResultJson(name, description, options, started, fields) {
  return {
    name,
    description,
    environment: environment(),
    totalSeconds: (performance.now() - started) / 1000,
    ...fields,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : null,
  };
}

/** The line under a result's title: date, Node, CPU, memory and how long the run took. */
export function runLine(e, seconds) {
  return `${e.date} · Node ${e.node} · ${e.cpu} × ${e.cores} · ${e.memoryGiB} GiB · took ${fmtNum(seconds, 0)} s.`;
}
