#!/usr/bin/env node
// `npm test`: install dependencies, start (or reuse) the throw-away S3 server, build every package and
// lint (scripts/lint.mjs), run every vitest suite, stop the server if this run started it, exit with
// vitest's code. Stages that do not need each other's results overlap: the S3 server and Chromium
// (neither needs node_modules) are brought up while npm ci runs, and the lint checks run beside the
// build (see scripts/lint.mjs).
//
// Extra arguments go to vitest: `npm test -- test/storage-conformance.test.ts`.
// Environment: TIDEMARK_S3=off runs without an S3 server (the S3 suites then skip, loudly);
// TIDEMARK_CHROMIUM=off skips installing Chromium for the HTML report test (it then skips, loudly; in CI it fails);
// TIDEMARK_KAFKA=off skips building the Kafka test broker (the Kafka suites then skip, loudly; in CI they fail);
// a preset S3_ENDPOINT (with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET) is used as is.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3_ENV_KEYS, ensureS3Server } from '../test/s3/server.mjs';
import { ensureChromium } from '../test/chromium/chromium.mjs';
import { ensureKafkaBroker } from '../test/kafka/broker.mjs';
import { lint } from './lint.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = path.join(repo, '.s3-data');
const vitestArgs = process.argv.slice(2);

const say = (msg) => console.log(`\n[tidemark test] ${msg}`);

/** Env handed to every child; the S3 settings are added once the server is up. */
const childEnv = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
/** Stops the S3 server if this run started it (a no-op otherwise); replaced once one is started. */
let stopServer = () => {};
/** Child processes running now (npm ci, the lint checks, vitest): killed when we are stopped. */
const children = new Set();
let stopping = false;

/** Runs a command in the repo with the children's env; resolves to its exit code. */
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repo, env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    children.add(child);
    child.on('error', (err) => {
      children.delete(child);
      reject(err);
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 1) : 1) });
    });
  });
}

function onSignal(signal) {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping`);
  for (const child of children) child.kill(signal);
  stopServer();
  process.exit(128 + (os.constants.signals[signal] ?? 1));
}
process.on('SIGINT', () => onSignal('SIGINT'));
process.on('SIGTERM', () => onSignal('SIGTERM'));
process.on('exit', () => {
  // A stage that failed early must not leave another one (npm ci, a lint check) running on.
  for (const child of children) child.kill('SIGTERM');
  stopServer();
});

/** Newest mtime among the files whose change means node_modules must be refreshed. */
function manifestsMtime() {
  const root = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
  const files = ['package.json', 'package-lock.json', ...(root.workspaces ?? []).map((w) => `${w}/package.json`)];
  return Math.max(
    ...files
      .map((f) => path.join(repo, f))
      .filter(existsSync)
      .map((f) => statSync(f).mtimeMs),
  );
}

async function install() {
  const hidden = path.join(repo, 'node_modules/.package-lock.json');
  if (existsSync(hidden) && statSync(hidden).mtimeMs >= manifestsMtime()) {
    say('dependencies are up to date (node_modules newer than every package.json and the lockfile)');
    return;
  }
  const flags = ['--no-audit', '--no-fund'];
  if (existsSync(path.join(repo, 'package-lock.json'))) {
    say('installing dependencies: npm ci');
    if ((await run('npm', ['ci', ...flags])).code === 0) return;
    say('npm ci failed (lockfile out of sync with a package.json?); falling back to npm install');
  } else {
    say('installing dependencies: npm install');
  }
  const { code } = await run('npm', ['install', ...flags]);
  if (code !== 0) throw new Error(`npm install failed with exit code ${code}`);
}

async function startS3() {
  if (process.env.TIDEMARK_S3 === 'off') {
    say('TIDEMARK_S3=off: running without an S3 server; the S3 suites will be skipped');
    return;
  }
  if (process.env.S3_ENDPOINT) {
    say(`using the S3 server from the environment: ${process.env.S3_ENDPOINT}`);
    return;
  }
  let server;
  try {
    server = await ensureS3Server(dataDir, say, (stop) => (stopServer = stop));
  } catch (err) {
    throw new Error(`${err.message}. Set TIDEMARK_S3=off to run without it (the S3 suites then skip).`);
  }
  for (const key of S3_ENV_KEYS) if (server.env[key] !== undefined) childEnv[key] = server.env[key];
}

/** Headless Chromium for the HTML report test: found or installed with apt-get, like the S3 server's packages. */
function findOrInstallChromium() {
  if (process.env.TIDEMARK_CHROMIUM === 'off') {
    say('TIDEMARK_CHROMIUM=off: not installing Chromium; the HTML report test will skip (or fail, in CI)');
    return;
  }
  const browser = ensureChromium(say);
  if (browser) {
    childEnv.CHROMIUM_PATH = browser;
    return;
  }
  if (process.env.CI === 'true') throw new Error('chromium could not be installed, and CI=true needs it for the HTML report test');
  say('WARNING: chromium could not be installed; the HTML report test will be SKIPPED');
}

/** The Kafka test broker (librdkafka's mock cluster, test/kafka/): packages with apt-get, then gcc. */
function buildKafkaBroker() {
  if (process.env.TIDEMARK_KAFKA === 'off') {
    say('TIDEMARK_KAFKA=off: not building the Kafka test broker; the Kafka suites will skip (or fail, in CI)');
    return;
  }
  const { binary, reason } = ensureKafkaBroker(say);
  if (binary) {
    say(`Kafka test broker: ${binary}`);
    childEnv.TIDEMARK_KAFKA_BROKER = binary;
    return;
  }
  if (process.env.CI === 'true') throw new Error(`the Kafka test broker could not be built, and CI=true needs it: ${reason}`);
  say(`WARNING: the Kafka test broker could not be built (${reason}); the Kafka suites will be SKIPPED`);
}

/** Reads vitest's JSON report into the one closing line CI looks for ("N passed, N failed, N skipped"). */
function summarize(reportFile, code) {
  let report;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8'));
  } catch {
    return `tidemark: vitest wrote no report (exit code ${code})`;
  }
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A test file that fails to load has no failed tests of its own; count it so the line is not green.
  const brokenFiles = report.numFailedTests === 0 ? (report.numFailedTestSuites ?? 0) : 0;
  return `tidemark: ${report.numPassedTests} passed, ${report.numFailedTests + brokenFiles} failed, ${skipped} skipped`;
}

/** Seconds since `t0`, for the stage timings printed along the way. */
const since = (t0) => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

async function main() {
  const t0 = Date.now();
  // npm ci and the services (S3 server, Chromium, the Kafka broker) need nothing from each other:
  // their scripts use Node's built-ins only. The services come up one after the other, as each may
  // run apt-get, which holds the dpkg lock.
  const installed = install().then(() => say(`dependencies ready after ${since(t0)}`));
  const services = startS3()
    .then(() => findOrInstallChromium())
    .then(() => buildKafkaBroker());
  // A failure of either is reported by the Promise.all below, not as an unhandled rejection.
  installed.catch(() => undefined);
  services.catch(() => undefined);
  await Promise.all([installed, services]);
  // Build every package and lint before the suites: typecheck (packages and tests), eslint, the API
  // report, prettier.
  const tLint = Date.now();
  say('building every package and linting: scripts/lint.mjs (build, typecheck and eslint, API report, prettier)');
  const checks = await lint({ env: childEnv, log: (m) => console.log(m), children });
  say(`build and lint done in ${since(tLint)}`);
  if (checks.buildFailed) return { code: 1, closing: 'tidemark: build failed; no tests were run' };
  if (checks.failed.length > 0) {
    return { code: 1, closing: `tidemark: lint failed (${checks.failed.join(', ')}); no tests were run` };
  }
  const reportDir = mkdtempSync(path.join(os.tmpdir(), 'tidemark-vitest-'));
  const reportFile = path.join(reportDir, 'report.json');
  say(`running every suite after ${since(t0)}: npx vitest run`);
  const tests = await run('npx', [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reportFile}`,
    ...vitestArgs,
  ]);
  const closing = summarize(reportFile, tests.code);
  rmSync(reportDir, { recursive: true, force: true });
  say(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s, vitest exit code ${tests.code}`);
  return { code: tests.code, closing };
}

main().then(
  ({ code, closing }) => {
    stopServer();
    console.log(`\n${closing}`);
    process.exit(code);
  },
  (err) => {
    console.error(`\n[tidemark test] error: ${err.message}`);
    stopServer();
    console.log('\ntidemark: test run aborted before vitest ran');
    process.exit(1);
  },
);
