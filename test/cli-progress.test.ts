/**
 * Progress lines of `write`, `read`, `sql`, `count`, `ingest` and `verify` (rows, bytes, rate, elapsed) on a
 * terminal stderr, and silence with `--quiet` or when stderr is not a terminal. In-process
 * through `main()` with a context that says stderr is a TTY and a clock that moves a second per
 * reading, so every step redraws; the results on stdout are checked to be unaffected.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressDraws, runMainWithProgressClock } from './support/cli-main.js';
import { columns } from './support/table-definitions.mjs';

const run = runMainWithProgressClock;
const draws = progressDraws;

const dir = mkdtempSync(join(tmpdir(), 'tidemark-progress-'));
const table = join(dir, 'wh', 'db.db', 't');
const input = join(dir, 'rows.jsonl');
const ROWS = 25_000;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const schema = JSON.stringify(columns('id BIGINT', 'name STRING'));
  expect((await run(['create', table, '--schema', schema], { tty: false })).code).toBe(0);
  writeFileSync(input, Array.from({ length: ROWS }, (_, i) => JSON.stringify({ id: i, name: `n${i}` })).join('\n') + '\n');
}, 60_000);

describe('progress on a terminal', () => {
  it('write draws rows, bytes against the input size, rate and elapsed time, then clears the line', async () => {
    const r = await run(['write', table, '--input', input], { tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`committed snapshot 1 (${ROWS} rows)\n`);
    const d = draws(r.stderr);
    expect(d.length).toBeGreaterThan(1);
    const last = d[d.length - 1]!;
    expect(last).toMatch(/^writing \[#+-*\] 2\d{4} rows [\d.]+ KiB\/[\d.]+ KiB [\d.]+ KiB\/s \d+s/);
    expect(r.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('read, count and sql draw rows and rate; stdout holds only the result', async () => {
    const read = await run(['read', table, '--format', 'csv'], { tty: true });
    expect(read.stdout.split('\r\n')).toHaveLength(ROWS + 2);
    expect(draws(read.stderr).at(-1)).toMatch(/^reading \d+ rows [\d.]+ (KiB|MiB) [\d.]+ (KiB|MiB)\/s \d+s/);
    const count = await run(['count', table, '--where', 'id >= 100'], { tty: true });
    expect(count.stdout).toBe(`${ROWS - 100}\n`);
    expect(draws(count.stderr).at(-1)).toMatch(/^counting \d+ rows [\d.]+k? rows\/s \d+s/);
    const sql = await run(['sql', 'SELECT id FROM t WHERE id < 5 ORDER BY id', '--table', `t=${table}`], { tty: true });
    expect(sql.stdout).toBe('{"id":0}\n{"id":1}\n{"id":2}\n{"id":3}\n{"id":4}\n');
    expect(draws(sql.stderr).at(-1)).toMatch(/^query 5 rows/);
  });

  it('ingest draws records and bytes of the source', async () => {
    const r = await run(['ingest', table, '--source', input, '--commit-user', 'progress-test', '--checkpoint-every', '100000'], {
      tty: true,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ status: 'source-done', records: ROWS });
    expect(draws(r.stderr).some((l) => /^ingesting \[#+-*\] \d+ records [\d.]+ KiB\/[\d.]+ KiB/.test(l))).toBe(true);
  });

  it('verify draws the data files it has checked against their total; stdout holds only the verdict', async () => {
    const files = (await run(['files', table, '--json'], { tty: false })).stdout.split('\n').filter((l) => l !== '').length;
    expect(files).toBeGreaterThan(0);
    const r = await run(['verify', table], { tty: true });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^ok: checked snapshot \\d+, \\d+ manifest\\(s\\), ${files} data file\\(s\\)`));
    expect(draws(r.stderr).at(-1)).toMatch(new RegExp(`^verifying \\[#+\\] ${files}/${files} files$`));
    expect((await run(['verify', table], { tty: false })).stderr).toBe('');
  });

  it('--quiet, and a stderr that is not a terminal, draw nothing', async () => {
    expect((await run(['read', table, '--quiet', '--limit', '3'], { tty: true })).stderr).toBe('');
    expect((await run(['count', table, '-q', '--where', 'id > 3'], { tty: true })).stderr).toBe('');
    expect((await run(['read', table, '--limit', '3'], { tty: false })).stderr).toBe('');
    const w = await run(['write', table], { tty: false, stdin: '{"id":-1,"name":"x"}\n' });
    expect(w.stderr).toBe('');
    expect(w.stdout).toMatch(/^committed snapshot \d+ \(1 row\)/);
  });
});
