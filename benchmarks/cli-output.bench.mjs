/**
 * CLI output benchmark: the `tidemark` binary reading one local append table of `--rows` rows
 * (several files) in each result format, `count` from manifests against a counting scan, and
 * `sql` (DuckDB over the table's Parquet files) against the same query over a staged copy (a
 * primary-key table of the same rows, which tidemark merges and hands to DuckDB as one Parquet
 * file). Each command runs as a fresh process, as a user runs it; the figures are wall time, rows/s,
 * the output size and the process's peak RSS (so a format that held the whole result in memory would
 * show it).
 *
 *   node benchmarks/cli-output.bench.mjs [--rows 400000]
 *
 * The machine is shared (2 cores, several agents): compare rows of one run, not runs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { WORK_DIR, environment, fmtInt, fmtNum, fmtRate, markdownTable, problemsSection } from './lib/report.mjs';
import { runIfMain } from './lib/standalone.mjs';

export const name = 'cli-output';

const BIN = fileURLToPath(new URL('../packages/cli/bin/tidemark.js', import.meta.url));
const RSS_HOOK = new URL('./lib/peak-rss-on-exit.mjs', import.meta.url).href;

/** Runs the binary; resolves with wall time, peak RSS (MiB) and stdout. */
function tidemark(args, { stdin, rssFile } = {}) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RSS_HOOK, BIN, ...args], {
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1', TIDEMARK_PEAK_RSS_FILE: rssFile },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) return reject(new Error(`tidemark ${args[0]} failed (${code}): ${stderr.slice(-1000)}`));
      let peakRssMiB;
      try {
        peakRssMiB = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        peakRssMiB = undefined;
      }
      resolve({ wallMs, peakRssMiB, stdout });
    });
    if (stdin !== undefined) child.stdin.end(stdin);
    else child.stdin.end();
  });
}

function rowsJsonl(start, n) {
  const lines = [];
  for (let i = start; i < start + n; i++) {
    lines.push(
      JSON.stringify({
        id: i,
        k: i % 1000,
        name: `name-${i}`,
        amount: `${i % 10000}.${String(i % 100).padStart(2, '0')}`,
        day: `2024-05-0${(i % 5) + 1}`,
      }),
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * @param {{ log?: (msg: string) => void, rows?: number }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const total = options.rows ?? 400_000;
  const dir = path.join(WORK_DIR, `cli-output-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rssFile = path.join(dir, 'rss');
  const problems = [];
  const table = path.join(dir, 'wh', 'db.db', 'orders');
  const pk = path.join(dir, 'wh', 'db.db', 'orders_pk');
  const schema = JSON.stringify([
    { name: 'id', type: 'BIGINT NOT NULL' },
    { name: 'k', type: 'INT' },
    { name: 'name', type: 'STRING' },
    { name: 'amount', type: 'DECIMAL(10, 2)' },
    { name: 'day', type: 'STRING NOT NULL' },
  ]);
  try {
    await tidemark(['create', table, '--schema', schema, '--partition', 'day'], { rssFile });
    await tidemark(['create', pk, '--schema', schema, '--partition', 'day', '--primary-key', 'id,day', '--option', 'bucket=2'], {
      rssFile,
    });
    const commits = 4;
    const per = Math.ceil(total / commits);
    for (let c = 0; c < commits; c++) {
      log(`writing commit ${c + 1}/${commits} (${per} rows) to both tables`);
      const input = rowsJsonl(c * per, per);
      await tidemark(['write', table], { stdin: input, rssFile });
      await tidemark(['write', pk], { stdin: input, rssFile });
    }
    const rows = [];
    const measure = async (label, args, outFile) => {
      log(label);
      const r = await tidemark(args, { rssFile });
      const size = outFile ? statSync(outFile).size : Buffer.byteLength(r.stdout);
      const resultLines = r.stdout.trim().split('\n');
      const summary = resultLines.length === 1 ? resultLines[0] : `${resultLines.length} result rows`;
      rows.push({ label, wallMs: r.wallMs, peakRssMiB: r.peakRssMiB, outputBytes: size, stdout: outFile ? undefined : summary });
      return r;
    };
    for (const format of ['jsonl', 'csv', 'parquet', 'arrow']) {
      const out = path.join(dir, `out.${format}`);
      await measure(`read --format ${format} --output`, ['read', table, '--format', format, '--output', out], out);
    }
    const c1 = await measure('count (manifests)', ['count', table]);
    const c2 = await measure('count --where (scan)', ['count', table, '--where', "day = '2024-05-02' OR k = 7"]);
    const c3 = await measure('count, primary-key table (scan, merged)', ['count', pk]);
    if (Number(c1.stdout) !== total) problems.push(`count printed ${c1.stdout.trim()}, expected ${total}`);
    if (Number(c3.stdout) !== total) problems.push(`count of the primary-key table printed ${c3.stdout.trim()}, expected ${total}`);
    void c2;
    const q = 'SELECT day, count(*) AS n, sum(amount) AS total FROM t GROUP BY day ORDER BY day';
    let duckdb = true;
    try {
      await import('@duckdb/node-api');
    } catch {
      duckdb = false;
      problems.push('@duckdb/node-api is not installed: sql rows skipped');
    }
    if (duckdb) {
      const a = await measure('sql, append table (DuckDB reads the Parquet files)', ['sql', q, '--table', `t=${table}`]);
      const b = await measure('sql, primary-key table (merged by tidemark, staged as Parquet)', ['sql', q, '--table', `t=${pk}`]);
      if (a.stdout !== b.stdout) problems.push('sql over the append and the primary-key table disagree');
    }
    const markdown = [
      `# CLI output (${fmtInt(total)} rows, local disk)`,
      '',
      'Each row is one `tidemark` process on the same table (5 columns, 5 partitions, 4 commits).',
      'Wall time includes Node start-up and module loading (about 0.3–0.5 s; DuckDB adds its own).',
      'The machine was shared with other agents (2 cores): compare rows of one run.',
      '',
      markdownTable(
        ['command', 'wall s', 'rows/s', 'output', 'peak RSS MiB'],
        rows.map((r) => [
          r.label,
          fmtNum(r.wallMs / 1000, 2),
          r.label.startsWith('read') ? fmtRate(total / (r.wallMs / 1000)) : '–',
          r.label.startsWith('read') ? `${fmtNum(r.outputBytes / 2 ** 20, 1)} MiB` : r.stdout,
          fmtNum(r.peakRssMiB, 0),
        ]),
      ),
      ...problemsSection(problems),
    ].join('\n');
    return {
      name,
      json: { environment: { ...environment(), shared: 'yes: 2 cores shared by several agents' }, rows: total, results: rows, problems },
      markdown,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, () => {
  const i = process.argv.indexOf('--rows');
  return run(i > 0 ? { rows: Number(process.argv[i + 1]) } : {});
});
