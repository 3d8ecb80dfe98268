/**
 * Measurement helpers shared by the benchmarks: every measurement runs in a fresh Node child
 * process (so JIT warm-up, caches and the heap of one measurement never leak into the next), which
 * prints one JSON object as its last stdout line; the parent adds the child's wall time and peak
 * RSS.
 *
 * Peak RSS comes from `process.resourceUsage().maxRSS` inside the child (the high-water mark of
 * the whole process, in KiB on Linux). Children also report the RSS right after their imports, so
 * a report can show the growth caused by the measured work alone.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs `node <script> <task> <jsonArgs>` and returns the child's JSON result plus `wallMs`.
 *
 * @param {string | URL} script   module run in the child (see {@link childMain})
 * @param {string} task
 * @param {unknown} args          JSON-serialisable arguments for the task
 * @param {{ timeoutMs?: number, nodeArgs?: string[], env?: Record<string, string> }} [options]  env: added to the parent's
 * @returns {Promise<Record<string, unknown> & { wallMs: number }>}
 */
export function runChild(script, task, args, options = {}) {
  const scriptPath = script instanceof URL ? fileURLToPath(script) : script;
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), scriptPath, task, JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      const wallMs = performance.now() - t0;
      const lines = stdout.trim().split('\n');
      const last = lines[lines.length - 1] ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        const why = signal === 'SIGKILL' && options.timeoutMs ? `timed out after ${options.timeoutMs} ms` : `exit ${code ?? signal}`;
        reject(new Error(`child '${task}' failed (${why}):\n${stderr.trim().slice(-2000)}\n${stdout.trim().slice(-500)}`));
        return;
      }
      resolve({ ...JSON.parse(last), wallMs });
    });
  });
}

/**
 * Entry point of a child module: dispatches `process.argv[2]` to `tasks[name](args)` and prints
 * the result, with `peakRssMiB` and `importRssMiB` added, as the last stdout line.
 *
 * @param {Record<string, (args: any) => Promise<Record<string, unknown>>>} tasks
 */
export async function childMain(tasks) {
  const importRssMiB = process.memoryUsage().rss / 2 ** 20;
  const [name, rawArgs] = process.argv.slice(2);
  const task = name === undefined ? undefined : tasks[name];
  if (task === undefined) {
    console.error(`unknown task '${name}'; known: ${Object.keys(tasks).join(', ')}`);
    process.exit(2);
  }
  const result = await task(rawArgs ? JSON.parse(rawArgs) : {});
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write('\n' + JSON.stringify({ ...result, importRssMiB, peakRssMiB }, bigintReplacer) + '\n');
}

/**
 * Runs the tasks of `script` for one warehouse `{ s3 }`: `(task, args)` runs `task` in a fresh
 * child with `args` and the warehouse's S3 settings, killed after `timeoutMs`.
 */
export function taskRunner(script, b, timeoutMs) {
  return (task, args) => runChild(script, task, { ...args, s3: b.s3 }, { timeoutMs });
}

/** Current RSS in MiB (for "after imports" baselines taken inside a task). */
export function rssMiB() {
  return process.memoryUsage().rss / 2 ** 20;
}

function bigintReplacer(_key, value) {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** Median of numbers (mean of the middle two for even counts). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * Runs the same child measurement `runs` times (each in a fresh process) and returns all runs.
 *
 * @returns {Promise<Array<Record<string, any>>>}
 */
export async function repeat(runs, script, task, args, options) {
  const out = [];
  for (let i = 0; i < runs; i++) out.push(await runChild(script, task, args, options));
  return out;
}

/** Picks the run whose `key` is the median (so all its other figures belong to the same run). */
export function medianRun(runs, key) {
  const sorted = [...runs].sort((a, b) => a[key] - b[key]);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
