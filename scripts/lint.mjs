#!/usr/bin/env node
// `npm run lint` (and the lint stage of `npm test`): build every package, typecheck the packages'
// sources with every test (tsconfig.eslint.json) and eslint (type-aware) on one program
// (scripts/typecheck-eslint.mjs), the API report check, prettier --check and the import circle check
// (scripts/check-circles.mjs, whose list of known circles is printed every run). Only the API report
// needs the build (it reads dist/*.d.ts), so the other checks run beside the build instead of after
// it: each is one single-threaded process, and run one after another they left a core idle for
// about a minute and a half of every `npm test`. The packages' own `typecheck` task is not run:
// `build` compiles the same tsconfig.json, so it reports the same errors. Each check's output is
// held back and printed whole when it ends, so parallel checks never interleave their lines.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs one check with its output captured; resolves to { name, code, output, seconds, printAlways }.
 * Output is printed when the check fails, or always with `printAlways`.
 */
function check(name, cmd, args, env, children, printAlways = false) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const done = (code, extra = '') => {
      children.delete(child);
      resolve({ name, code, output: output + extra, seconds: (Date.now() - t0) / 1000, printAlways });
    };
    child.on('error', (err) => done(1, `\n${cmd}: ${err.message}\n`));
    child.on('close', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

/**
 * Runs the build and the checks, printing each as it ends. `children` (a Set) holds the running
 * processes, so a caller stopping on a signal can kill them. Resolves to
 * { buildFailed, failed: [names of failed checks] }.
 */
export async function lint({ env = process.env, log = (m) => console.log(m), children = new Set() } = {}) {
  const report = (r) => {
    log(`[lint] ${r.name}: ${r.code === 0 ? 'ok' : `FAILED (exit code ${r.code})`} in ${r.seconds.toFixed(1)} s`);
    if ((r.code !== 0 || r.printAlways) && r.output.trim()) log(r.output.trimEnd());
    return r;
  };
  const build = check('build (npx turbo run build)', 'npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], env, children)
    .then(report)
    .then(async (b) =>
      b.code === 0
        ? [b, report(await check('API report (api/*.api.md)', 'node', ['scripts/api-report.mjs', '--check'], env, children))]
        : [b],
    );
  const others = [
    // tsc -p tsconfig.eslint.json and eslint ., on one TypeScript program (see the script).
    check('typecheck and eslint (scripts/typecheck-eslint.mjs)', 'node', ['scripts/typecheck-eslint.mjs'], env, children),
    check('prettier --check', 'npx', ['prettier', '--check', '.'], env, children),
    check('import circles (scripts/check-circles.mjs)', 'node', ['scripts/check-circles.mjs'], env, children, true),
  ].map((p) => p.then(report));
  const [buildResults, ...rest] = await Promise.all([build, ...others]);
  const results = [...buildResults, ...rest];
  return { buildFailed: buildResults[0].code !== 0, failed: results.filter((r) => r.code !== 0).map((r) => r.name) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = Date.now();
  const { failed } = await lint();
  console.log(
    `[lint] ${failed.length === 0 ? 'all checks passed' : `failed: ${failed.join(', ')}`} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  process.exit(failed.length === 0 ? 0 : 1);
}
