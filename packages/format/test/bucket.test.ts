import { describe, expect, it } from 'vitest';
import { encodeBinaryRow } from '../src/binary-row.js';
import { bucketOf, bucketOfValues } from '../src/bucket.js';
import { FormatError } from '../src/errors.js';
import { murmurHash } from '../src/murmur-hash.js';
import { parseTypeString } from '../src/type-json.js';

const INT = parseTypeString('INT NOT NULL');
const STRING = parseTypeString('STRING NOT NULL');

describe('Paimon murmur hash and bucket (spec §5.4)', () => {
  it('INT 0 -> -300363099 -> bucket 1 of 2', () => {
    const row = encodeBinaryRow([INT], [0]);
    expect(murmurHash(row)).toBe(-300363099);
    expect(bucketOf(row, 2)).toBe(1);
  });

  it('INT 1 -> 1465514398 -> bucket 0 of 2', () => {
    const row = encodeBinaryRow([INT], [1]);
    expect(murmurHash(row)).toBe(1465514398);
    expect(bucketOf(row, 2)).toBe(0);
    expect(bucketOfValues([INT], [1], 2)).toBe(0);
  });

  it('STRING "Alice" -> 1285337400', () => {
    expect(murmurHash(encodeBinaryRow([STRING], ['Alice']))).toBe(1285337400);
  });

  it('uses Java remainder semantics for negative hashes', () => {
    // -300363099 % 7 = -1 in Java (sign of the dividend), abs -> 1; a floor modulo would give 6.
    expect(bucketOf(encodeBinaryRow([INT], [0]), 7)).toBe(1);
  });

  it('matches reference MurmurHash3_x86_32 on word-aligned input', () => {
    // Reference value of MurmurHash3_x86_32 for 4 zero bytes with seed 0 is 0x2362F9DE.
    expect(murmurHash(new Uint8Array(4), 0) >>> 0).toBe(0x2362f9de);
    // Empty input with seed 0 hashes to 0.
    expect(murmurHash(new Uint8Array(0), 0)).toBe(0);
  });

  it('rejects non-positive bucket counts', () => {
    expect(() => bucketOf(new Uint8Array(8), 0)).toThrow(FormatError);
    expect(() => bucketOf(new Uint8Array(8), -1)).toThrow(FormatError);
  });
});
