import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildInitialSchema, openTable, toInternal } from '@tidemark/core';
import { bucketOfValues, deserializeBinaryRow, serializeBinaryRow, serializeSchema, type DataType, type Value } from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import { bucketWriter, recordRouter } from '../src/record-router.js';

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
    // bucketWriter names the same writer from the (partition, bucket) alone, as the driver needs it
    // for buckets it compacts without records (partition values as a BinaryRow decodes them).
    const fromBucket = bucketWriter(schema, 3);
    for (const [slot, w] of writerOf) {
      const [dt, bucket] = slot.split('/');
      expect(fromBucket([dt!], Number(bucket)), slot).toBe(w);
    }
    expect(bucketWriter(schema, 1)(['d0'], 2)).toBe(0);
  });

  it('bucketWriter agrees with the router for partitions of several types, read back from their BinaryRow', () => {
    const schema = buildInitialSchema({
      fields: [
        { name: 'd', type: 'DATE NOT NULL' },
        { name: 'n', type: 'BIGINT NOT NULL' },
        { name: 'p', type: 'DECIMAL(10, 2) NOT NULL' },
        { name: 'ts', type: 'TIMESTAMP(3) NOT NULL' },
        { name: 'k', type: 'INT NOT NULL' },
      ],
      partitionKeys: ['d', 'n', 'p', 'ts'],
      primaryKeys: ['d', 'n', 'p', 'ts', 'k'],
      options: { bucket: '3' },
    });
    const types = schema.partitionKeys.map((name) => schema.fields.find((f) => f.name === name)!.type);
    const route = recordRouter(schema, 4);
    const fromBucket = bucketWriter(schema, 4);
    const writers = new Set<number>();
    for (let i = 0; i < 120; i++) {
      const record = { d: `2024-01-0${1 + (i % 3)}`, n: BigInt(i % 5), p: `${i % 4}.25`, ts: `2024-01-01 00:00:0${i % 2}.000`, k: i };
      const w = route(record);
      const part = schema.partitionKeys.map((name, j) => toInternal(types[j]!, record[name as keyof typeof record]) as Value);
      const decoded = deserializeBinaryRow(serializeBinaryRow(types, part), types);
      expect(fromBucket(decoded, bucketOfValues([INT], [i], 3))).toBe(w);
      writers.add(w);
    }
    expect(writers.size).toBeGreaterThan(1);
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

  it('sends every key of one table bucket to one writer, for keys of many types (writers compact their buckets)', async () => {
    const schema = buildInitialSchema(
      {
        fields: [
          { name: 'dt', type: 'STRING NOT NULL' },
          { name: 'd', type: 'DATE NOT NULL' },
          { name: 'ts', type: 'TIMESTAMP(3) NOT NULL' },
          { name: 'dec', type: 'DECIMAL(10, 2) NOT NULL' },
          { name: 'b', type: 'BOOLEAN NOT NULL' },
          { name: 'k', type: 'BIGINT NOT NULL' },
          { name: 's', type: 'STRING NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        partitionKeys: ['dt'],
        primaryKeys: ['dt', 'd', 'ts', 'dec', 'b', 'k', 's'],
        options: { bucket: '5' },
      },
      1,
    );
    const io = new MemoryFileIO();
    const location = `memory://router-${randomBytes(6).toString('hex')}/db.db/t`;
    await io.write(`${location}/schema/schema-0`, serializeSchema(schema));
    const table = await openTable(location, { fileIO: io });
    const records = Array.from({ length: 300 }, (_, i) => ({
      dt: `p${i % 2}`,
      d: `2024-0${1 + (i % 9)}-1${i % 10}`,
      ts: `2024-05-0${1 + (i % 9)}T10:${String(i % 60).padStart(2, '0')}:00.123`,
      dec: `${i % 37}.${String(i % 100).padStart(2, '0')}`,
      b: i % 3 === 0,
      k: BigInt(i * 7919),
      s: `key-${i % 41}-é`,
      v: `v${i}`,
    }));
    await table.append(records);
    const route = recordRouter(schema, 3);
    const byValue = new Map(records.map((r) => [r.v, r]));
    let rows = 0;
    for (let bucket = 0; bucket < 5; bucket++) {
      for (const dt of ['p0', 'p1']) {
        const read = await table.newRead({ bucket, partition: { dt } }).toArrowTable();
        const writers = new Set<number>();
        for (const r of read.toArray()) writers.add(route(byValue.get((r.toJSON() as { v: string }).v)!));
        rows += read.numRows;
        expect(writers.size, `writers of bucket ${bucket} of dt=${dt}`).toBeLessThanOrEqual(1);
      }
    }
    expect(rows).toBe(300);
  });
});
