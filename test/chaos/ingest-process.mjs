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

/** The crash points a trial can reach: only primary-key writers compact. */
export function crashPointsOf(points, pk) {
  return pk ? points : points.filter((p) => p !== 'before-compact-snapshot');
}
