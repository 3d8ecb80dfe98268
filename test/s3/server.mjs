// Node-side driver of test/s3/start-server.sh, shared by scripts/test.mjs and benchmarks/run.mjs:
// reuse the server running on a data dir, or start one on a free port pair, and stop it only if
// we started it.
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const serverScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'start-server.sh');

/** The variables start-server.sh prints, in the order they are exported to children. */
export const S3_ENV_KEYS = ['S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION', 'S3_BUCKET', 'S3_DATA_DIR'];

/** Parses the `export KEY=VALUE` lines start-server.sh prints (values may be shell-quoted with printf %q). */
export function parseEnvLines(text) {
  const env = {};
  for (const line of text.split('\n')) {
    const m = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    const raw = m[2];
    env[m[1]] = /^'.*'$/.test(raw) ? raw.slice(1, -1) : raw.replace(/\\(.)/g, '$1');
  }
  return env;
}

function runScript(args) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [serverScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * Returns `{ env, started, stop }`: the S3 env of the server on `dataDir` (reused when running,
 * else started on a free port and port+1 for the mon). `stop()` stops it only when `started`,
 * synchronously, so it can run from an exit or signal handler. `register(stop)` is called before
 * the start begins, so a signal during startup can stop a half-started server. Throws when the
 * start fails.
 */
export async function ensureS3Server(dataDir, log = (msg) => console.log(msg), register = () => {}) {
  const status = await runScript(['status', dataDir]);
  if (status.code === 0) {
    const env = parseEnvLines(status.out);
    log(`reusing the S3 server already running on ${dataDir} (${env.S3_ENDPOINT}); it stays up afterwards`);
    return { env, started: false, stop: () => {} };
  }
  let port;
  for (let i = 0; i < 20 && port === undefined; i++) {
    const p = await freePort();
    if (p < 65535 && (await portFree(p + 1))) port = p;
  }
  if (port === undefined) throw new Error('found no free pair of ports for the S3 server');
  log(`starting the S3 server (Ceph RGW) on 127.0.0.1:${port}, data in ${dataDir}`);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    log(`stopping the S3 server started by this run (${dataDir})`);
    spawnSync('bash', [serverScript, 'stop', dataDir], { stdio: ['ignore', 'inherit', 'inherit'] });
  };
  register(stop);
  const started = await runScript(['start', String(port), dataDir]);
  if (started.code !== 0) {
    stop(); // the script already cleans up after itself; this catches a half-started server too
    throw new Error(`the S3 server did not start (exit ${started.code}; logs in ${dataDir}/log)`);
  }
  const env = parseEnvLines(started.out);
  if (!env.S3_ENDPOINT || !env.S3_BUCKET) throw new Error('start-server.sh printed no S3_ENDPOINT/S3_BUCKET');
  return { env, started: true, stop };
}
