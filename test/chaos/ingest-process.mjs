// The pieces both chaos harnesses use (harness.mjs for file sources, kafka-harness.mjs for Kafka):
// running the ingest CLI as a child process that may be killed, its environment, the checksums of
// the records, the crash points a trial can reach. A module of its own, so that harness.mjs, which
// runs its command line at top level, can load kafka-harness.mjs without an import cycle.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(repo, 'packages', 'cli', 'bin', 'tidemark.js');

export function checksum(id, payload) {
  return createHash('sha256').update(`${id}:${payload}`).digest('hex').slice(0, 16);
}

export function childEnv(s3, crashAt) {
  const env = { ...process.env, TIDEMARK_NO_PROGRESS: '1' };
  delete env.TIDEMARK_CRASH_AT;
  if (crashAt) env.TIDEMARK_CRASH_AT = crashAt;
  if (s3) {
    Object.assign(env, {
      // With --faults the children talk to S3 through the fault-injecting proxy.
      AWS_ENDPOINT_URL_S3: s3.childEndpoint ?? s3.endpoint,
      AWS_REGION: s3.region,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
  }
  return env;
}

/** One run of the ingest CLI; resolves with how it ended. */
export function runOnce(args, env, killAfterMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'ingest', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer;
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    if (killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

/**
 * The `tidemark ingest` arguments of a chaos run: the table, its source, the checkpoint state, the
 * records per checkpoint and the writers, then `extra`.
 */
export function ingestArgs({ tablePath, source, statePath, checkpointEvery, parallelism }, ...extra) {
  return [
    tablePath,
    '--source',
    source,
    '--state',
    statePath,
    '--checkpoint-every',
    String(checkpointEvery),
    '--parallelism',
    String(parallelism),
    ...extra,
  ];
}

/** The crash points a trial can reach: only primary-key writers compact. */
export function crashPointsOf(points, pk) {
  return pk ? points : points.filter((p) => p !== 'before-compact-snapshot');
}

/** The columns of every chaos table: the record id, a random payload and its checksum. */
export const CHAOS_FIELDS = [
  { name: 'id', type: 'BIGINT NOT NULL' },
  { name: 'payload', type: 'STRING' },
  { name: 'checksum', type: 'STRING' },
];

/**
 * Writes schema 0 of a trial's table at `tablePath` ({@link CHAOS_FIELDS}, Parquet): with `pk`,
 * primary key `id` in 2 to 4 buckets drawn from `rand`, else an append table of bucket -1;
 * `options` are added last.
 */
export async function writeChaosSchema(io, tablePath, { pk, rand, options }) {
  const { buildInitialSchema } = await import('@tidemark/core');
  const { serializeSchema } = await import('@tidemark/format');
  const schema = buildInitialSchema({
    fields: CHAOS_FIELDS,
    ...(pk ? { primaryKeys: ['id'] } : {}),
    options: { bucket: pk ? String(2 + Math.floor(rand() * 3)) : '-1', 'file.format': 'parquet', ...options },
  });
  await io.write(`${tablePath}/schema/schema-0`, serializeSchema(schema));
}

/**
 * How run `run` of a trial ends, drawn from `rand`: the first run crashes at the named point
 * `trial % points` (so every point is covered whatever the seed), later ones at a random point
 * (its `1..maxCount`-th hit) or by a SIGKILL after `killMs[0] + rand * killMs[1]` ms, each with a
 * share of `crashRate`; the last five of `maxRuns` runs are calm, so every trial terminates.
 */
export function crashPlan({ run, trial, points, maxRuns, crashRate, rand, maxCount, killMs }) {
  const calm = run > maxRuns - 5;
  const r = rand();
  if (run === 1) return { crashAt: `${points[trial % points.length]}:1` };
  if (!calm && r < crashRate * 0.53) {
    const point = points[Math.floor(rand() * points.length)];
    return { crashAt: `${point}:${1 + Math.floor(rand() * maxCount)}` };
  }
  if (!calm && r < crashRate) return { killAfter: Math.floor(killMs[0] + rand() * killMs[1]) };
  return {};
}

/**
 * What one run's end means for the trial: `'killed'` (counted in `kills` by crash point or
 * 'random-kill'), `'failed'` (a problem pushed), or the run's JSON summary.
 */
export function runOutcome(res, crashAt, run, kills, problems) {
  if (res.signal === 'SIGKILL') {
    const key = crashAt ? crashAt.split(':')[0] : 'random-kill';
    kills[key] = (kills[key] ?? 0) + 1;
    return 'killed';
  }
  if (res.code !== 0) {
    problems.push(`run ${run} (crash ${crashAt ?? 'none'}) exited with ${res.code}: ${res.err.trim().split('\n').slice(-12).join(' | ')}`);
    return 'failed';
  }
  const last = res.out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last);
  } catch {
    problems.push(`run ${run}: no JSON summary on stdout: ${last}`);
    return 'failed';
  }
}

/**
 * Runs the ingest CLI with `args` again and again, each run crashing as {@link crashPlan} draws
 * (`plan`: its `trial`, `points`, `maxRuns`, `crashRate`, `rand`, `maxCount`, `killMs`), until a
 * run's summary `finishes(summary, finalRun)` (`finalRun`: what `isFinalRun()` said before the
 * run started), a run fails, or `maxRuns` runs are spent. `onOutput(stderr)` sees every run's
 * output, killed ones included. Kills are counted in `kills`, problems pushed to `problems`.
 * Resolves with { runs, summary (of the last run that ended normally), done }.
 */
export async function runUntilDone({ args, s3, plan, kills, problems, finishes, isFinalRun = () => true, onOutput = () => undefined }) {
  const { maxRuns } = plan;
  let runs = 0;
  let summary;
  let done = false;
  while (!done) {
    runs++;
    if (runs > maxRuns) {
      problems.push(`not done after ${maxRuns} runs`);
      break;
    }
    const finalRun = isFinalRun();
    const { crashAt, killAfter } = crashPlan({ ...plan, run: runs });
    const res = await runOnce(args, childEnv(s3, crashAt), killAfter);
    onOutput(res.err);
    const outcome = runOutcome(res, crashAt, runs, kills, problems);
    if (outcome === 'killed') continue;
    if (outcome === 'failed') break;
    summary = outcome;
    if (summary.status !== 'source-done') problems.push(`run ${runs}: status ${summary.status}`);
    if (finishes(summary, finalRun)) done = true;
  }
  return { runs, summary, done };
}

/**
 * The sink's checkpoint records (`<commitUser>-<checkpoint>`) left in flight once the source is
 * done: they must all be cleared (records of killed TableWrites and commits, `write-…`,
 * `commit-…`, are left for orphan cleanup's age rule). Pushes a problem when there are any.
 */
export async function checkInflightCleared(listInflightRecords, io, tablePath, commitUser, problems) {
  let leftover = 0;
  for await (const r of listInflightRecords(io, tablePath)) if (r.id.startsWith(`${commitUser}-`)) leftover++;
  if (leftover > 0) problems.push(`${leftover} in-flight checkpoint records of the sink left after the source was done`);
}

/**
 * Runs trials 0..trials-1, `concurrency` at a time: `runTrial(trial, seed)` (seeds derived from
 * `seed0`, so a failing trial can be replayed), a trial that throws counted as failed. `describe(r)`
 * is logged after each. Returns the results and the tally fields every harness reports.
 */
export async function runTrials({ trials, concurrency, seed0, runTrial, describe, log }) {
  const results = [];
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < trials) {
      const trial = next++;
      const seed = (seed0 + trial * 7919) >>> 0;
      let r;
      try {
        r = await runTrial(trial, seed);
      } catch (e) {
        r = {
          ok: false,
          trial,
          seed,
          runs: 0,
          kills: {},
          lost: 0,
          duplicated: 0,
          corrupt: 0,
          problems: [`harness error: ${e?.stack ?? e}`],
        };
      }
      results.push(r);
      log(
        `trial ${trial} (seed ${seed}, P=${r.parallelism}): ${r.ok ? 'ok' : 'FAILED'} after ${r.runs} runs ${JSON.stringify(r.kills)}${describe(r)}` +
          `${r.ok ? '' : ` — ${r.problems.join('; ')}`}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  const kills = {};
  for (const r of results) for (const [k, n] of Object.entries(r.kills)) kills[k] = (kills[k] ?? 0) + n;
  const sum = (field) => results.reduce((a, r) => a + (r[field] ?? 0), 0);
  return {
    results,
    sum,
    tally: {
      trials,
      passed: results.filter((r) => r.ok).length,
      failed: results.filter((r) => !r.ok).map((r) => ({ trial: r.trial, seed: r.seed, problems: r.problems })),
      runs: sum('runs'),
      kills,
      lost: sum('lost'),
      duplicated: sum('duplicated'),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    },
  };
}
