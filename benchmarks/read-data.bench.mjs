/**
 * Data-read benchmark: rows/s of reading a few large data files into Arrow (the Parquet decoder
 * is the cost, not planning), for all columns and for 1 of 5 columns, by tidemark, tidemark with
 * its worker pool off, raw single-threaded parquet-wasm and DuckDB `read_parquet`, with peak RSS.
 * The many-small-files reads and scan planning are in read.bench.mjs.
 *
 *   node benchmarks/read-data.bench.mjs [--rows 1000000] [--files 5] [--runs 3]
 *
 * Runs in a few minutes. Results go to benchmarks/results/read-data.json and read-data.md.
 * Imports the BUILT packages (run the build first).
 */
import { runDataRead, dataReadMarkdown } from './lib/data-read.mjs';
import { environment, runLine } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'read-data';

/**
 * @param {{ rows?: number, files?: number, runs?: number, log?: (m: string) => void }} [options]
 * @returns {Promise<{ name: string, json: object, markdown: string }>}
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const started = performance.now();
  const dataRead = await runDataRead({ rows: options.rows, files: options.files, runs: options.runs ?? 3, log });
  const env = environment();
  const json = { benchmark: name, environment: env, ...dataRead, totalSeconds: (performance.now() - started) / 1000 };
  const markdown = ['# Data-read benchmark', '', runLine(env, json.totalSeconds), '', ...dataReadMarkdown(dataRead)].join('\n');
  return { name, json, markdown };
}

await runStandalone(import.meta.url, run, { '--rows': 'rows', '--files': 'files', '--runs': 'runs' }, { s3: false });
