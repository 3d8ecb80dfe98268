/**
 * A Parquet file whose footer is damaged, one byte at a time, over the footer's first bytes (file
 * metadata, schema, first row group): every read ends, and fails with a CorruptFileError naming
 * the damage, never with a decoder's JavaScript error text. Reads run in a child process, so a
 * read that never ends (as a schema claiming absent children once did) is killed, not a hung run.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from './support/cli-main.js';
import { runNode } from './support/cli-process.js';

const WORKER = fileURLToPath(new URL('./workers/parquet-footer-damage-worker.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tidemark-footer-damage-'));
const table = join(dir, 't');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const schema = '[{"name":"id","type":"INT"},{"name":"name","type":"STRING"},{"name":"ts","type":"TIMESTAMP(6)"}]';
  expect((await runMain(['create', table, '--schema', schema])).code).toBe(0);
  const rows = [1, 2, 3].map((id) => JSON.stringify({ id, name: `n${id}`, ts: `2024-01-0${id} 10:00:00.000001` })).join('\n');
  expect((await runMain(['write', table], { stdin: rows + '\n' })).code).toBe(0);
}, 90_000);

describe('damaged Parquet footers', () => {
  // 160 bytes × 4 changes: a few seconds alone; the kill guard allows for a machine at load 100.
  it('every single-byte change ends in a CorruptFileError or a clean read, never a hang or a JS error text', async () => {
    const bucket = join(table, 'bucket-0');
    const file = join(
      bucket,
      readdirSync(bucket).find((f) => f.endsWith('.parquet'))!,
    );
    const r = await runNode(WORKER, [JSON.stringify({ file, from: 0, to: 160, dir })], { timeoutMs: 540_000 });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const outcomes = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ok?: true; error?: string; message?: string; offset: number; delta: number });
    expect(outcomes.length).toBeGreaterThan(5);
    for (const o of outcomes) {
      if (o.ok) continue;
      expect([o.offset, o.delta, o.error]).toEqual([o.offset, o.delta, 'CorruptFileError']);
      expect(o.message).toMatch(/^<file>: /);
      expect(o.message).not.toMatch(/is not a function|Cannot read propert|is not iterable|undefined|Maximum call stack/);
    }
  }, 600_000);
});
