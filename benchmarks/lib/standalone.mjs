/**
 * Running one benchmark module on its own (`node benchmarks/<name>.bench.mjs`) instead of through
 * the `npm run bench` harness (benchmarks/run.mjs).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeResults } from './report.mjs';

/**
 * The S3 settings the harness passes to `run(options)`, from S3_ENDPOINT, AWS_REGION,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and S3_BUCKET.
 */
export function s3Settings(env) {
  return {
    endpoint: env.S3_ENDPOINT,
    region: env.AWS_REGION || 'us-east-1',
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
    bucket: env.S3_BUCKET,
  };
}

/** {@link s3Settings} when S3_ENDPOINT is set, else undefined (S3 rows are skipped). */
export function s3FromEnv(env = process.env) {
  return env.S3_ENDPOINT ? s3Settings(env) : undefined;
}

/**
 * When the module at `moduleUrl` is the script node was started with, runs the benchmark
 * (`runBenchmark()` resolves to `{ name, json, markdown }`), writes its result files and prints the
 * markdown. Does nothing when the module is imported (by the harness).
 */
export async function runIfMain(moduleUrl, runBenchmark) {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const result = await runBenchmark();
  const written = await writeResults(result.name, result.json, result.markdown);
  console.log(result.markdown);
  console.error(`\nwrote ${written.json} and ${written.md}`);
}

/**
 * Parses `--flag N` pairs into options: `flags` maps each flag to its option name
 * (`{ '--rows': 'rows' }`). Any other argument is an error naming it and the flags there are.
 */
export function parseNumberArgs(argv, flags) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const key = flags[argv[i]];
    if (key === undefined) throw new Error(`unknown argument ${argv[i]} (expected ${Object.keys(flags).join(', ')})`);
    const value = Number(argv[++i]);
    if (!Number.isFinite(value)) throw new Error(`${argv[i - 1]} needs a number, got ${argv[i]}`);
    opts[key] = value;
  }
  return opts;
}
