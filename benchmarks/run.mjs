#!/usr/bin/env node
// `npm run bench [-- name ...] [-- --no-build]`: builds the packages (benchmarks import them from
// dist, like a user would), makes sure the throw-away S3 server runs (reusing <repo>/.s3-data, or
// starting one and stopping it afterwards), then runs every benchmarks/*.bench.mjs, or the ones
// named. Each writes benchmarks/results/<name>.json and <name>.md and prints its table;
// benchmarks/results/SUMMARY.md collects every result file present.
//
// A benchmark module exports `name` and `async run(options)` returning `{ name, json, markdown }`
// and writes nothing itself (the harness does, with lib/report.mjs). The harness passes
// options = { log, s3 } where s3 = { endpoint, region, accessKeyId, secretAccessKey, bucket } or
// undefined (TIDEMARK_S3=off). Each module can also run alone: `node benchmarks/<name>.bench.mjs`.
// `node benchmarks/run.mjs --summary` only rewrites SUMMARY.md from the result files present.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureS3Server } from '../test/s3/server.mjs';
import { RESULTS_DIR, writeResults } from './lib/report.mjs';
import { buildTargets, targetsMarkdown } from './lib/targets.mjs';
import { s3Settings } from './lib/standalone.mjs';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(benchDir, '..');
const resultsDir = RESULTS_DIR;
const log = (msg) => console.log(`[bench] ${msg}`);

const args = process.argv.slice(2);
const noBuild = args.includes('--no-build');
// A benchmark's own options (e.g. read's --plan-only) are parsed by that benchmark alone: refuse them
// here rather than run the full benchmark as if they had been taken.
const unknown = args.filter((a) => a.startsWith('--') && a !== '--no-build' && a !== '--summary');
if (unknown.length > 0) {
  console.error(
    `[bench] run.mjs takes only --no-build and --summary, not ${unknown.join(' ')}; ` +
      `pass a benchmark's own options to it directly, e.g. node benchmarks/read.bench.mjs --plan-only`,
  );
  process.exit(2);
}
const wanted = args.filter((a) => !a.startsWith('--')).map((a) => a.replace(/\.bench\.mjs$/, ''));

const available = readdirSync(benchDir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''))
  .sort();
const selected = wanted.length === 0 ? available : wanted;
for (const name of selected) {
  if (!available.includes(name)) {
    console.error(`[bench] no benchmark named '${name}'; available: ${available.join(', ')}`);
    process.exit(2);
  }
}

/** The first Markdown table of a result file, to quote in the summary. */
function firstTable(md) {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  if (start < 0) return '(no table)';
  let end = start;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  return lines.slice(start, end).join('\n');
}

/** The scoreboard of performance targets, from whatever result files are present. */
function writeTargets() {
  const targets = buildTargets(resultsDir);
  writeFileSync(path.join(resultsDir, 'targets.json'), `${JSON.stringify(targets, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, 'targets.md'), targetsMarkdown(targets));
}

function writeSummary() {
  writeTargets();
  const files = readdirSync(resultsDir)
    .filter((f) => f.endsWith('.md') && f !== 'SUMMARY.md' && f !== 'targets.md')
    .sort();
  // The scoreboard first: it is what a reader of the summary looks for.
  files.unshift('targets.md');
  const parts = [
    '# Benchmark summary',
    '',
    'Written by `npm run bench` from the result files in this directory: the first table of each,',
    'with a link to the full result. Figures come from one machine (2 shared cores here); compare',
    'runs on the same machine only.',
  ];
  for (const f of files) {
    const name = f.replace(/\.md$/, '');
    let when = '';
    try {
      const json = JSON.parse(readFileSync(path.join(resultsDir, `${name}.json`), 'utf8'));
      const date = json.environment?.date ?? json.date;
      if (date) when = ` (run ${date})`;
    } catch {
      // a result without its JSON still gets its table quoted
    }
    parts.push('', `## ${name}${when}`, '', `Full result: [${f}](./${f})`, '', firstTable(readFileSync(path.join(resultsDir, f), 'utf8')));
  }
  writeFileSync(path.join(resultsDir, 'SUMMARY.md'), `${parts.join('\n')}\n`);
}

async function main() {
  if (args.includes('--summary')) {
    writeSummary();
    log('wrote benchmarks/results/SUMMARY.md');
    return;
  }
  if (!noBuild) {
    log('building the packages (npx turbo run build)');
    const b = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], {
      cwd: repo,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    });
    if (b.status !== 0) throw new Error(`build failed (exit ${b.status})`);
  }

  let s3;
  let stopServer = () => {};
  const onSignal = (sig) => {
    stopServer();
    process.exit(128 + (os.constants.signals[sig] ?? 1));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (process.env.TIDEMARK_S3 === 'off') {
      log('TIDEMARK_S3=off: S3 rows are skipped');
    } else if (process.env.S3_ENDPOINT) {
      log(`using the S3 server from the environment: ${process.env.S3_ENDPOINT}`);
      s3 = s3Settings(process.env);
    } else {
      const server = await ensureS3Server(path.join(repo, '.s3-data'), log, (stop) => (stopServer = stop));
      s3 = s3Settings(server.env);
    }

    mkdirSync(resultsDir, { recursive: true });
    for (const name of selected) {
      const mod = await import(pathToFileURL(path.join(benchDir, `${name}.bench.mjs`)).href);
      if (typeof mod.run !== 'function') throw new Error(`benchmarks/${name}.bench.mjs exports no run(options)`);
      log(`running ${name}`);
      const t0 = Date.now();
      const result = await mod.run({ log: (m) => log(`${name}: ${m}`), s3 });
      const written = await writeResults(result.name ?? name, result.json, result.markdown);
      console.log(`\n${result.markdown}\n`);
      log(
        `${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s; wrote ${path.relative(repo, written.json)} and ${path.relative(repo, written.md)}`,
      );
    }
    writeSummary();
    log('wrote benchmarks/results/SUMMARY.md');
  } finally {
    stopServer();
  }
}

main().catch((err) => {
  console.error(`[bench] error: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
