/**
 * Damaged data files never crash a read and never go unnamed: a truncated or missing file is
 * refused with its size, and a flipped byte anywhere in a file (footer, page headers, pages)
 * either reads back or fails with one line naming the file — including parquet-wasm traps
 * (`RuntimeError: unreachable`), which escape the decoder's promises.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTidemark } from './support/cli-process.js';

const GUARD = { timeoutMs: 30_000 };
let dir: string;
let table: string;
let dataFile: string;
let original: Buffer;
const expected = Array.from({ length: 40 }, (_, i) => `{"id":${i * 7},"s":"v${i}"}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tidemark-integrity-'));
  table = join(dir, 'wh', 'db.db', 't');
  const c = await runTidemark(['create', table, '--schema', '[{"name":"id","type":"BIGINT"},{"name":"s","type":"STRING"}]'], GUARD);
  expect(c.code).toBe(0);
  const w = await runTidemark(['write', table], { stdin: expected.join('\n') + '\n', ...GUARD });
  expect(w.code).toBe(0);
  const bucket = join(table, 'bucket-0');
  dataFile = join(
    bucket,
    readdirSync(bucket).find((f) => f.endsWith('.parquet'))!,
  );
  original = readFileSync(dataFile);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function restore(): void {
  writeFileSync(dataFile, original);
}

describe('damaged data files', () => {
  it('a truncated file is refused with its size and the recorded size', async () => {
    for (const size of [0, 8, Math.floor(original.length / 2), original.length - 1]) {
      restore();
      truncateSync(dataFile, size);
      const r = await runTidemark(['read', table], GUARD);
      expect(r.code, `size ${size}`).toBe(1);
      expect(r.stderr).toContain(`${dataFile}: the file is ${size} bytes, but its manifest entry records ${original.length} bytes`);
      expect(r.stdout).toBe('');
    }
    restore();
  });

  it('a missing file is named', async () => {
    rmSync(dataFile);
    const r = await runTidemark(['read', table], GUARD);
    restore();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(dataFile);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('every flipped byte reads back or fails naming the file, never crashing', async () => {
    const outcomes = { same: 0, named: 0 };
    for (let offset = 0; offset < original.length; offset += 37) {
      const bytes = Buffer.from(original);
      bytes[offset] = bytes[offset]! ^ 0x10;
      writeFileSync(dataFile, bytes);
      const r = await runTidemark(['read', table], GUARD);
      const where = `byte ${offset}: ${r.stderr}`;
      expect(r.timedOut, where).toBe(false);
      expect(r.stderr, where).not.toMatch(/\n\s+at |uncaught|unhandled/);
      if (r.code === 0) {
        outcomes.same += r.stdout === expected.join('\n') + '\n' ? 1 : 0;
      } else {
        expect(r.code, where).toBe(1);
        // Damage is reported as an unexpected error (not the user's input), naming the file.
        expect(r.stderr, where).toMatch(
          new RegExp(`^tidemark read: (unexpected error: )?${dataFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
        );
        outcomes.named++;
      }
    }
    restore();
    // Most flips hit the footer or page headers and are caught; the count guards against a reader
    // that silently accepts everything.
    expect(outcomes.named).toBeGreaterThan(5);
    expect(statSync(dataFile).size).toBe(original.length);
  }, 180_000);

  it('a file whose footer row count disagrees with the manifest is refused', async () => {
    // Another valid file of the same table with fewer rows, put in place of this one.
    const other = join(dir, 'wh', 'db.db', 'u');
    expect(
      (await runTidemark(['create', other, '--schema', '[{"name":"id","type":"BIGINT"},{"name":"s","type":"STRING"}]'], GUARD)).code,
    ).toBe(0);
    expect((await runTidemark(['write', other], { stdin: '{"id":1,"s":"x"}\n', ...GUARD })).code).toBe(0);
    const otherFile = join(
      other,
      'bucket-0',
      readdirSync(join(other, 'bucket-0')).find((f) => f.endsWith('.parquet'))!,
    );
    const padded = Buffer.concat([readFileSync(otherFile)]);
    copyFileSync(otherFile, dataFile);
    const r = await runTidemark(['read', table], GUARD);
    restore();
    expect(r.code).toBe(1);
    // Either the size or the row count gives it away; both name the file.
    expect(r.stderr).toMatch(
      new RegExp(`${dataFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (the file is ${padded.length} bytes|the file's footer holds 1 rows)`),
    );
  });
});
