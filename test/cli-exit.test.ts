/**
 * A failing command ends its process: the built `tidemark` binary and a library user that aborts
 * and closes its writer both exit on their own after an error, with the error reported. Each child
 * is killed after a generous timeout, which the assertions then report as a hang (`timedOut`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode, runTidemark } from './support/cli-process.js';
import { columns } from './support/table-definitions.mjs';

const HANG_GUARD_MS = 20_000;
let dir: string;
let table: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tidemark-exit-'));
  table = join(dir, 'wh', 'db.db', 't');
  const schema = JSON.stringify(columns('id BIGINT NOT NULL', 'd DATE', 'ts TIMESTAMP(3)', 'amount DECIMAL(5, 2)', 'n INT'));
  const r = await runTidemark(['create', table, '--schema', schema], { timeoutMs: HANG_GUARD_MS });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `count` valid JSON lines followed by `bad`. */
function jsonl(name: string, bad: string, count = 0): string {
  const path = join(dir, name);
  const good = Array.from({ length: count }, (_, i) =>
    JSON.stringify({ id: i, d: '2024-01-01', ts: '2024-01-01 00:00:00', amount: '1.00', n: 1 }),
  );
  writeFileSync(path, [...good, bad].join('\n') + '\n');
  return path;
}

describe('the tidemark binary exits after a failure', () => {
  const cases: Array<[string, string, number, RegExp]> = [
    ['wrong type', '{"id":"abc"}', 0, /input line 1, column 'id': expected BIGINT, got "abc"/],
    ['NULL in NOT NULL', '{"id":null}', 3, /input line 4, column 'id'/],
    ['INT out of range', '{"id":1,"n":4294967296}', 0, /input line 1, column 'n'/],
    ['bad DATE', '{"id":1,"d":"2024-13-45"}', 5, /input line 6, column 'd'/],
    ['bad TIMESTAMP', '{"id":1,"ts":"yesterday"}', 0, /input line 1, column 'ts'/],
    ['too many DECIMAL digits', '{"id":1,"amount":"1.234"}', 9_000, /input line 9001, column 'amount'/],
  ];
  for (const [what, bad, before, message] of cases) {
    it(`write with ${what} exits with code 1 and says so`, async () => {
      const input = jsonl(`${what.replace(/\W+/g, '-')}.jsonl`, bad, before);
      const r = await runTidemark(['write', table, '--input', input], { timeoutMs: HANG_GUARD_MS });
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    });
  }

  it('write of a CSV with a type error exits with code 1', async () => {
    const input = join(dir, 'bad.csv');
    writeFileSync(input, 'id,n\n1,2\nabc,3\n');
    const r = await runTidemark(['write', table, '--input', input, '--format', 'csv'], { timeoutMs: HANG_GUARD_MS });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/input line 3, column 'id'/);
  });

  it('write from stdin with a bad row exits with code 1', async () => {
    const r = await runTidemark(['write', table], { stdin: '{"id":1}\n{"id":"x"}\n', timeoutMs: HANG_GUARD_MS });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/input line 2, column 'id'/);
  });

  it('ingest of a 2-line file with a bad value exits with code 1', async () => {
    const source = jsonl('ingest-bad.jsonl', '{"id":"abc"}', 1);
    const r = await runTidemark(['ingest', table, '--source', source, '--state', join(dir, 'state')], { timeoutMs: HANG_GUARD_MS });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/column 'id'.*expected BIGINT, got "abc"/);
  });

  it('bad usage exits with code 2', async () => {
    const r = await runTidemark(['write', table, '--no-such-option'], { timeoutMs: HANG_GUARD_MS });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--no-such-option/);
  });

  it('nothing was committed by the failed runs', async () => {
    const r = await runTidemark(['snapshots', table, '--json'], { timeoutMs: HANG_GUARD_MS });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(''); // JSON lines, one per snapshot: none
  });
});

describe('a library user that aborts and closes after a validation error', () => {
  const worker = fileURLToPath(new URL('./workers/write-fail-worker.mjs', import.meta.url));
  for (const mode of ['early', 'late']) {
    it(`exits on its own (${mode} failure)`, async () => {
      const warehouse = mkdtempSync(join(dir, `lib-${mode}-`));
      // One pool worker at least, so the pool's teardown is what is tested.
      const r = await runNode(worker, [warehouse, mode], { env: { TIDEMARK_PARQUET_WORKERS: '1' }, timeoutMs: HANG_GUARD_MS });
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(`validation error: column 'id', row 0: expected BIGINT, got "abc"`);
      expect(r.stdout).toContain('closed');
      expect(r.timedOut).toBe(false);
      expect(r.code).toBe(0);
    });
  }
});
