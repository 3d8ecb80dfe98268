import { describe, expect, it } from 'vitest';
import { buildInitialSchema } from '@tidemark/core';
import { bucketOfValues, type DataType } from '@tidemark/format';
import { recordRouter } from '../src/record-router.js';

const INT = { root: 'INT', nullable: false } as DataType;

describe('recordRouter', () => {
  it('sends every record of one (partition, bucket) of a fixed-bucket primary-key table to one writer', () => {
    const schema = buildInitialSchema({
      fields: [
        { name: 'dt', type: 'STRING NOT NULL' },
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      partitionKeys: ['dt'],
      primaryKeys: ['dt', 'k'],
      options: { bucket: '4' },
    });
    const route = recordRouter(schema, 3);
    const writerOf = new Map<string, number>();
    const used = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const dt = `d${i % 3}`;
      const k = i % 50;
      const w = route({ dt, k, v: `x${i}` });
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThan(3);
      used.add(w);
      // The table's own bucket of the key, as Java computes it.
      const slot = `${dt}/${bucketOfValues([INT], [k], 4)}`;
      if (writerOf.has(slot)) expect(writerOf.get(slot)).toBe(w);
      writerOf.set(slot, w);
    }
    expect(writerOf.size).toBe(12);
    expect(used.size).toBeGreaterThan(1);
  });

  it('keeps one key on one writer for dynamic buckets, and goes round-robin for append tables', () => {
    const pk = buildInitialSchema({
      fields: [
        { name: 'k', type: 'BIGINT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '-1' },
    });
    const route = recordRouter(pk, 4);
    const seen = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const k = i % 17;
      const w = route({ k: BigInt(k), v: String(i) });
      if (seen.has(k)) expect(seen.get(k)).toBe(w);
      seen.set(k, w);
    }
    expect(new Set(seen.values()).size).toBeGreaterThan(1);

    const append = buildInitialSchema({ fields: [{ name: 'k', type: 'BIGINT' }], options: { bucket: '-1' } });
    const rr = recordRouter(append, 3);
    expect([0, 1, 2, 3, 4, 5].map(() => rr({ k: 1n }))).toEqual([0, 1, 2, 0, 1, 2]);
  });
});
