/**
 * The ORC project's own example files (shared fixtures, never copied into the repo): every file
 * with an expected `.jsn.gz` decodes to exactly those rows, and every file in `corrupt/` is
 * rejected with an error (never a crash or a hang).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

import { sharedFixturesDir } from '../../../test/support/fixtures.js';
import { bytesSource, OrcError, OrcReader, OrcTypeKind, UnsupportedOrcFeatureError } from '../src/index.js';
import { difference, parseExact, rowValue } from './orc-json.js';

const dir = sharedFixturesDir('orc', 'ORC example file tests');
const expectedDir = dir ? join(dir, 'expected') : '';
const withExpected = dir
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.orc') && existsSync(join(expectedDir, f.replace(/\.orc$/, '.jsn.gz'))))
      .sort()
  : [];
const corrupt = dir
  ? readdirSync(join(dir, 'corrupt'))
      .filter((f) => f.endsWith('.orc'))
      .sort()
  : [];

/** Fails a read that neither finishes nor fails within `ms` (a hang in an async step). */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function readAllRows(path: string, columns?: string[]): Promise<{ reader: OrcReader; rows: unknown[] }> {
  const reader = await OrcReader.open(bytesSource(readFileSync(path)), path);
  const rows: unknown[] = [];
  const struct = reader.root.kind === OrcTypeKind.STRUCT;
  for await (const batch of reader.readBatches(columns ? { columns } : {})) {
    for (let i = 0; i < batch.numRows; i++) rows.push(struct ? rowValue(batch.data, i) : rowValue(batch.data.children[0]!, i));
  }
  return { reader, rows };
}

describe.skipIf(!dir)('ORC example files with expected rows', () => {
  it('finds the expected outputs', () => {
    expect(withExpected.length).toBeGreaterThanOrEqual(25);
  });

  for (const file of withExpected) {
    const lzo = file.includes('Lzo');
    it(`${file} ${lzo ? 'is refused with an error naming lzo' : 'decodes to exactly the expected rows'}`, async () => {
      const path = join(dir!, file);
      if (lzo) {
        await expect(readAllRows(path)).rejects.toThrow(UnsupportedOrcFeatureError);
        await expect(readAllRows(path)).rejects.toThrow(/compression lzo is not supported/);
        return;
      }
      const { reader, rows } = await readAllRows(path);
      const lines = gunzipSync(readFileSync(join(expectedDir, file.replace(/\.orc$/, '.jsn.gz'))))
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      expect(rows.length).toBe(lines.length);
      expect(reader.numberOfRows).toBe(lines.length);
      for (let i = 0; i < lines.length; i++) {
        const d = difference(rows[i], parseExact(lines[i]!));
        if (d) expect.fail(`${file} row ${i}: ${d}`);
      }
    });
  }
});

describe.skipIf(!dir)('corrupt ORC files', () => {
  it('has corrupt files to check', () => {
    expect(corrupt.length).toBeGreaterThan(0);
  });
  for (const file of corrupt) {
    it(`${file} fails with an OrcError naming the file`, async () => {
      const path = join(dir!, 'corrupt', file);
      const err = await withTimeout(readAllRows(path), 20_000, file).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OrcError);
      expect((err as Error).message).toContain(file);
    });
  }
});
