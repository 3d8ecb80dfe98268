/**
 * tidemark as a user outside the repository gets it: the README's "Installing" commands run as
 * written (its tarball directory and project path swapped for temporary ones), so a step the README
 * gets wrong fails here; every workspace package must be packed and installed into the fresh project
 * (no workspace links, third-party dependencies from the npm cache or registry), and there the README's command-line
 * steps and its "In code" example run as written (only its warehouse location is swapped for a local one), `npx tidemark
 * --help` answers, the installed CLI reads the table the example wrote, and `tidemark sql` says how
 * to install DuckDB, which is an optional peer dependency and so not installed.
 *
 * Needs the built packages (`npm test` builds first) and the npm registry or a warm npm cache.
 */
import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
/** Every workspace package (`packages/<name>`), from the root package.json. */
const PACKAGES = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces.map((w) =>
  w.replace(/^packages\//, ''),
);

const dir = mkdtempSync(join(tmpdir(), 'tidemark-packed-'));
const tarballs = join(dir, 'tarballs');
const project = join(dir, 'project');
const warehouse = join(dir, 'warehouse');

/** The first ```lang block after the line `heading` of README.md. */
function readmeBlock(heading: string, lang: string): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const start = readme.indexOf(heading);
  expect(start, `README.md has a "${heading.trim()}" section`).toBeGreaterThan(0);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(start));
  expect(block, `README.md "${heading.trim()}" is followed by a \`\`\`${lang} block`).not.toBeNull();
  return block![1]!;
}

/** The README's commands of a ```sh block: continuation lines joined, comments and blank lines dropped. */
function shellCommands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** Output of the README's `npx tidemark --help` install step. */
let installedHelp = '';

// The README's "Installing" steps as written, from the clone (this checkout, already built) on:
// its tarball directory and project path are swapped for temporary ones, nothing else.
beforeAll(async () => {
  const steps = shellCommands(readmeBlock('\n## Installing', 'sh'));
  expect(steps.slice(0, 2)).toEqual(['git clone <this repository> tidemark && cd tidemark', 'npm ci && npx turbo run build']);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'packed-install-check', private: true, type: 'module' }));
  let cwd = repo;
  for (const step of steps.slice(2)) {
    const command = step.replaceAll('/tmp/tidemark-packages', tarballs).replaceAll('/path/to/your/project', project);
    const cd = /^cd (\S+)$/.exec(command);
    if (cd) {
      cwd = resolvePath(cwd, cd[1]!);
      continue;
    }
    // Outside the repository npm must not look for workspaces; the cache serves what it holds.
    const outside = !cwd.startsWith(repo);
    const env = {
      ...process.env,
      TIDEMARK_NO_PROGRESS: '1',
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_loglevel: 'error',
      ...(outside ? { npm_config_workspaces: 'false' } : {}),
    };
    const r = await run('sh', ['-c', command], { cwd, env, maxBuffer: 16 << 20 }).catch((e: { stderr?: string; message: string }) => {
      throw new Error(`README install step failed: ${step}\n${e.stderr ?? e.message}`);
    });
    if (/^npx tidemark --help$/.test(command)) installedHelp = r.stdout;
  }
  expect(cwd).toBe(project);
}, 360_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the packed packages installed outside the repository', () => {
  it('install from their tarballs alone, run the README example and the tidemark command', async () => {
    // The README packs every workspace package (they depend on each other).
    const packed = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'));
    expect(packed.sort()).toEqual(
      ['tidemark-0.1.0.tgz', ...PACKAGES.filter((p) => p !== 'tidemark').map((p) => `tidemark-${p}-0.1.0.tgz`)].sort(),
    );
    // Each tarball carries its README and built code, not the TypeScript sources or tests.
    for (const t of packed) {
      const { stdout } = await run('tar', ['-tzf', join(tarballs, t)]);
      const files = stdout.split('\n');
      expect(files, t).toContain('package/README.md');
      expect(files, t).toContain('package/dist/index.js');
      expect(files, t).toContain('package/dist/index.d.ts');
      expect(
        files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/')),
        t,
      ).toEqual([]);
    }

    // Real copies, not links back into the repository.
    for (const name of ['tidemark', '@tidemark/core', '@tidemark/cli']) {
      const installed = join(project, 'node_modules', name);
      expect(lstatSync(installed).isSymbolicLink(), name).toBe(false);
      expect(realpathSync(installed).startsWith(project), name).toBe(true);
    }

    // The README's example, with a local warehouse, then a look at what it wrote.
    const example = readmeBlock('\nIn code:', 'ts');
    expect(example).toContain("from 'tidemark'");
    const script =
      example.replaceAll('s3://lake/warehouse', warehouse) +
      '\nconsole.log(JSON.stringify({ rows: arrow.numRows, id: String(arrow.get(0)?.id), day: arrow.get(0)?.day }));\n';
    writeFileSync(join(project, 'example.mjs'), script);
    const ex = await run(process.execPath, ['example.mjs'], { cwd: project });
    expect(JSON.parse(ex.stdout.trim())).toEqual({ rows: 1, id: '1', day: '2024-05-01' });

    expect(installedHelp).toMatch(/^Usage: tidemark <command>/);
    expect(installedHelp).toContain('  sql ');
    const read = await run('npx', ['--no-install', 'tidemark', 'read', join(warehouse, 'shop.db/orders')], {
      cwd: project,
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1' },
    });
    expect(read.stdout).toBe('{"id":1,"day":"2024-05-01"}\n');

    // The README's command-line steps, as a shell runs them, in a directory of their own.
    const steps = readmeBlock('\nOn the command line:', 'sh')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const cwd = join(project, 'cli-steps');
    mkdirSync(cwd);
    const outputs: string[] = [];
    for (const step of steps) {
      // npx looks for the bin from the working directory upwards: the project's node_modules.
      const r = await run('sh', ['-c', step], { cwd, env: { ...process.env, TIDEMARK_NO_PROGRESS: '1' } });
      outputs.push(r.stdout);
    }
    expect(outputs[0]).toContain("created database 'shop'");
    expect(outputs[2]).toBe('committed snapshot 1 (1 row)\n');
    expect(outputs[3]).toBe('id | day\n---+-----------\n 1 | 2024-05-01\n');
    expect(outputs[4]).toBe('1\n');

    // DuckDB is an optional peer: not installed here, so `sql` says how to get it.
    const sql = await run('npx', ['--no-install', 'tidemark', 'sql', 'SELECT 1'], { cwd: project }).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(sql?.code).toBe(1);
    expect(sql?.stderr).toContain(
      'tidemark sql needs DuckDB, an optional dependency that is not installed: run `npm install @duckdb/node-api`',
    );

    // The subpath entries resolve to the single packages.
    const sub = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const a = await import('tidemark/core'); const b = await import('@tidemark/core'); const c = await import('tidemark');" +
          'console.log(a.openTable === b.openTable && c.openTable === b.openTable, typeof (await import("tidemark/format")).toArrowSchema)',
      ],
      { cwd: project },
    );
    expect(sub.stdout.trim()).toBe('true function');
  }, 240_000);
});
