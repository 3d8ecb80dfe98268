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
 * Parses a benchmark's flags into options. `flags` maps each flag to its option name, for a
 * number (`{ '--rows': 'rows' }`), or to `[name, kind]` with kind `number`, `numbers` (comma
 * separated), `string`, `strings` (comma separated), `flag` (true, takes no value) or `off` (false,
 * takes no value: `--no-<thing>`). Any other
 * argument, or a missing or non-numeric value, is an error naming it and the flags there are.
 */
export function parseArgs(argv, flags) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const spec = flags[flag];
    if (spec === undefined) throw new Error(`unknown argument ${flag} (expected ${Object.keys(flags).join(', ')})`);
    const [key, kind] = typeof spec === 'string' ? [spec, 'number'] : spec;
    if (kind === 'flag' || kind === 'off') {
      opts[key] = kind === 'flag';
      continue;
    }
    const raw = argv[++i];
    if (raw === undefined) throw new Error(`${flag} needs a value`);
    const number = (v) => {
      const n = Number(v);
      if (v === '' || !Number.isFinite(n)) throw new Error(`${flag} needs a number, got ${raw}`);
      return n;
    };
    if (kind === 'number') opts[key] = number(raw);
    else if (kind === 'numbers') opts[key] = raw.split(',').map(number);
    else if (kind === 'strings') opts[key] = raw.split(',');
    else opts[key] = raw;
  }
  return opts;
}

/** {@link parseArgs} with numbers only (`{ '--rows': 'rows' }`). */
export const parseNumberArgs = parseArgs;

/**
 * The standalone entry of a benchmark module: when it is the script node was started with, runs
 * `run` with the options parsed from the command line ({@link parseArgs} with `flags`) and, unless
 * `s3: false`, the S3 settings of the environment; then writes and prints the result.
 */
export async function runStandalone(moduleUrl, run, flags, { s3 = true } = {}) {
  await runIfMain(moduleUrl, () => run({ ...parseArgs(process.argv.slice(2), flags), ...(s3 ? { s3: s3FromEnv() } : {}) }));
}
