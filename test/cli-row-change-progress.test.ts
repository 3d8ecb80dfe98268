/**
 * Progress lines of `delete`, `update` and `rollback` on a terminal stderr (one bar per phase,
 * cleared before the result is printed), and silence with `--json`, `--quiet` or a stderr that is
 * not a terminal. In-process through `main()` with a context that says stderr is a TTY and a
 * clock that moves a second per reading, so every step redraws (as test/cli-progress.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressDraws, runMainWithProgressClock } from './support/cli-main.js';
import { columns } from './support/table-definitions.mjs';

const run = runMainWithProgressClock;
const draws = progressDraws;

const dir = mkdtempSync(join(tmpdir(), 'tidemark-row-progress-'));
const dv = join(dir, 'wh', 'db.db', 'dv');
const pk = join(dir, 'wh', 'db.db', 'pk');
const COMMITS = 4;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rowsOf = (commit: number): string =>
  Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: commit * 100 + i, dt: `d${commit % 2}`, v: 'x' })).join('\n') + '\n';

beforeAll(async () => {
  const schema = JSON.stringify(columns('id INT NOT NULL', 'dt STRING NOT NULL', 'v STRING'));
  const dvCreate = ['create', dv, '--schema', schema, '--partition', 'dt', '--option', 'deletion-vectors.enabled=true'];
  expect((await run(dvCreate, { tty: false })).code).toBe(0);
  const pkCreate = ['create', pk, '--schema', schema, '--partition', 'dt', '--primary-key', 'id,dt', '--option', 'bucket=2'];
  expect((await run(pkCreate, { tty: false })).code).toBe(0);
  for (let c = 1; c <= COMMITS; c++) {
    for (const t of [dv, pk]) expect((await run(['write', t], { tty: false, stdin: rowsOf(c) })).code).toBe(0);
  }
}, 60_000);

describe('progress of delete, update and rollback on a terminal', () => {
  it('delete on an append table draws the data files scanned against their total, then clears the line', async () => {
    const r = await run(['delete', dv, '--where', "v = 'x'"], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`deleted ${COMMITS * 50} rows: committed snapshot ${COMMITS + 1}\n`);
    const d = draws(r.stderr);
    expect(d.some((l) => /^deleting: scanning \[#{24}\] 4\/4 files [\d.]+ files\/s \d+s$/.test(l))).toBe(true);
    expect(d.some((l) => /^deleting: scanning \[#*-+\] [0-3]\/4 files/.test(l))).toBe(true);
    expect(d.some((l) => l.startsWith('deleting: committing'))).toBe(true);
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('update on a primary-key table draws the rows matched as they are found', async () => {
    const r = await run(['update', pk, '--where', "dt = 'd1'", '--set', '{"v": "y"}'], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`updated ${(COMMITS / 2) * 50} rows: committed snapshot ${COMMITS + 1}\n`);
    const d = draws(r.stderr);
    expect(d.some((l) => new RegExp(`^updating: scanning ${(COMMITS / 2) * 50} rows matched`).test(l))).toBe(true);
    expect(d.some((l) => l.startsWith('updating: writing'))).toBe(true);
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('a dry run draws the scan too, and stops there', async () => {
    const r = await run(['delete', pk, '--where', 'id < 250', '--dry-run'], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^dry run: would delete 100 keys/);
    const d = draws(r.stderr);
    expect(d.some((l) => /^deleting: scanning 100 rows matched/.test(l))).toBe(true);
    expect(d.some((l) => /^deleting: (writing|committing)/.test(l))).toBe(false);
  });

  it('rollback draws the snapshots removed, the snapshots read and the files deleted', async () => {
    const r = await run(['rollback', pk, '--to', '2'], { tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^rolled back to snapshot 2: removed snapshots 3, 4, 5/);
    const d = draws(r.stderr);
    expect(d).toContain('rolling back: snapshots [########################] 3/3 snapshots');
    expect(d).toContain('rolling back: manifests [########################] 3/3 snapshots read');
    expect(d.some((l) => /^rolling back: deleting \[#+\] (\d+)\/\1 files$/.test(l))).toBe(true);
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('--json, --quiet and a stderr that is not a terminal draw nothing', async () => {
    for (const [argv, tty] of [
      [['delete', dv, '--where', 'id = 101', '--json'], true],
      [['delete', dv, '--where', 'id = 103', '--quiet'], true],
      [['delete', dv, '--where', 'id = 105'], false],
      [['update', pk, '--where', 'id = 101', '--set', '{"v": "z"}', '--json'], true],
      [['update', pk, '--where', 'id = 101', '--set', '{"v": "w"}', '-q'], true],
      [['update', pk, '--where', 'id = 101', '--set', '{"v": "v"}'], false],
      [['rollback', pk, '--to', '2', '--dry-run', '--json'], true],
      [['rollback', pk, '--to', '1', '--quiet'], true],
      [['rollback', dv, '--to', '1'], false],
    ] as const) {
      const r = await run([...argv], { tty });
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr, argv.join(' ')).toBe('');
      expect(r.stdout).not.toBe('');
    }
  });
});
