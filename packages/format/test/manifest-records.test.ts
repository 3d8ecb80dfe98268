/**
 * Manifest files in either format: Avro and ORC are told apart by their first bytes, from whole
 * buffers and from chunked sources alike, and anything else is refused naming both formats.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { sharedFixturesDir } from '../../../test/support/fixtures.js';
import { CorruptFileError, decodeManifestList, readManifestRecords } from '../src/index.js';
import { FIXTURES, HAVE_FIXTURES } from './fixtures.js';

async function* chunks(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const n of sizes) {
    yield bytes.subarray(at, at + n);
    at += n;
  }
  if (at < bytes.length) yield bytes.subarray(at);
}

async function all(source: Uint8Array | AsyncIterable<Uint8Array>, path: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const r of readManifestRecords(source, path)) out.push(r);
  return out;
}

describe('readManifestRecords', () => {
  it('refuses bytes that are neither Avro nor ORC, naming both formats and the file', async () => {
    for (const source of [Buffer.from('PAR1 not a manifest'), chunks(Buffer.from('PAR1 not a manifest'), [1, 1])]) {
      const err = await all(source, 'manifest-x').then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CorruptFileError);
      expect((err as Error).message).toMatch(/^manifest-x: neither an Avro object container nor an ORC file .*found 50415231/);
    }
  });

  const orcDir = sharedFixturesDir('paimon-orc', 'ORC manifest records (manifest-records.test.ts)');
  it.skipIf(!orcDir)('an ORC manifest list decodes the same from a buffer and from 1-byte-first chunks', async () => {
    const dir = join(orcDir!, 'orc-pk-mor/default.db/pk_table_scan_and_read_mor/manifest');
    const name = readdirSync(dir).find((f) => f.startsWith('manifest-list-'))!;
    const bytes = readFileSync(join(dir, name));
    expect(bytes.subarray(0, 3).toString('latin1')).toBe('ORC');
    const whole = await decodeManifestList(bytes, name);
    expect(whole.length).toBeGreaterThan(0);
    expect(whole.every((m) => m.fileName.startsWith('manifest-'))).toBe(true);
    expect(await decodeManifestList(chunks(bytes, [1, 1, 5]), name)).toEqual(whole);
  });

  it.skipIf(!HAVE_FIXTURES)('an Avro manifest list still streams from chunks', async () => {
    const dir = join(FIXTURES, 'pk-mor/default.db/pk_table_scan_and_read_mor/manifest');
    const name = readdirSync(dir).find((f) => f.startsWith('manifest-list-'))!;
    const bytes = readFileSync(join(dir, name));
    const whole = await decodeManifestList(bytes, name);
    expect(whole.length).toBeGreaterThan(0);
    expect(await decodeManifestList(chunks(bytes, [1, 2, 3]), name)).toEqual(whole);
  });
});
