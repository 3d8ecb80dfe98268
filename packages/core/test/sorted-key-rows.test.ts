/**
 * The binary search of BIGINT keys in a batch sorted by key (`sortedKeyRows`) against a test of
 * every row: keys on both sides of 0 and of 32-bit boundaries, repeated rows of one key, lists with
 * absent, repeated and unordered keys.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { DataField } from '@tidemark/format';
import { sortedKeyRows } from '../src/read/row-filter.js';

const FIELD: DataField = { id: 0, name: 'id', type: { root: 'BIGINT', nullable: false } } as DataField;

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('sortedKeyRows (BIGINT)', () => {
  it('finds exactly the rows a test of every row finds', () => {
    const next = random(42);
    const pool = [
      0n,
      -1n,
      1n,
      2n ** 32n - 1n,
      2n ** 32n,
      -(2n ** 32n),
      2n ** 31n,
      -(2n ** 31n) - 1n,
      2n ** 63n - 1n,
      -(2n ** 63n),
      12345678901234n,
    ];
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(next() * 300);
      const keys: bigint[] = [];
      for (let i = 0; i < n; i++) {
        const k = next() < 0.5 ? pool[Math.floor(next() * pool.length)]! : BigInt(Math.floor((next() - 0.5) * 2 ** 40));
        // Repeats of a key in a row (records of one key in a file before the merge).
        const times = next() < 0.1 ? 3 : 1;
        for (let t = 0; t < times; t++) keys.push(k);
      }
      keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const batch = new arrow.RecordBatch({ id: arrow.makeVector(BigInt64Array.from(keys)).data[0]! });
      const wanted: unknown[] = [];
      for (let i = 0; i < Math.floor(next() * 20); i++) {
        const r = next();
        wanted.push(
          r < 0.4 && n > 0
            ? keys[Math.floor(next() * n)]!
            : r < 0.7
              ? pool[Math.floor(next() * pool.length)]!
              : Number(Math.floor((next() - 0.5) * 1e9)),
        );
      }
      const expected = keys.flatMap((k, i) => (wanted.some((w) => BigInt(w as bigint) === k) ? [i] : []));
      expect(sortedKeyRows(batch, [FIELD], FIELD, wanted), `round ${round}`).toEqual(expected);
    }
  });
});
