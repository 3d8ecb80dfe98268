import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DynamicBucketAssigner, buildInitialSchema, keyHashOf, openTable, toInternal } from '@tidemark/core';
import {
  bucketOfValues,
  deserializeBinaryRow,
  parseTypeString,
  serializeBinaryRow,
  serializeSchema,
  type DataType,
  type Value,
} from '@tidemark/format';
import { MemoryFileIO } from '@tidemark/storage';
import { SinkUsageError, WriterRoutingError } from '../src/errors.js';
import { bucketWriter, recordRouter, writerBucketAssigner, writerOfBucket } from '../src/record-router.js';

const INT = { root: 'INT', nullable: false } as DataType;

/** A route that needs no bucket assigner answers at once. */
function sync(w: number | Promise<number>): number {
  expect(typeof w).toBe('number');
  return w as number;
}

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
      const w = sync(route({ dt, k, v: `x${i}` }));
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
    const stringType = schema.fields[0]!.type;
    for (const [slot, w] of writerOf) {
      const [dt, bucket] = slot.split('/');
      expect(fromBucket(serializeBinaryRow([stringType], [dt!]), [dt!], Number(bucket)), slot).toBe(w);
    }
    expect(bucketWriter(schema, 1)(serializeBinaryRow([stringType], ['d0']), ['d0'], 2)).toBe(0);
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
      const w = sync(route(record));
      const part = schema.partitionKeys.map((name, j) => toInternal(types[j]!, record[name as keyof typeof record]) as Value);
      const bytes = serializeBinaryRow(types, part);
      expect(fromBucket(bytes, deserializeBinaryRow(bytes, types), bucketOfValues([INT], [i], 3))).toBe(w);
      writers.add(w);
    }
    expect(writers.size).toBeGreaterThan(1);
  });

  it('dynamic buckets: assigns the bucket first, then sends each (partition, bucket) to one writer; append tables go round-robin', async () => {
    const pk = buildInitialSchema(
      {
        fields: [
          { name: 'dt', type: 'STRING NOT NULL' },
          { name: 'k', type: 'BIGINT NOT NULL' },
          { name: 'v', type: 'STRING' },
        ],
        partitionKeys: ['dt'],
        primaryKeys: ['dt', 'k'],
        options: { bucket: '-1', 'dynamic-bucket.target-row-num': '3' },
      },
      1,
    );
    const io = new MemoryFileIO();
    const location = `memory://router-dyn-${randomBytes(6).toString('hex')}/db.db/t`;
    await io.write(`${location}/schema/schema-0`, serializeSchema(pk));
    const table = await openTable(location, { fileIO: io });
    const assigner = DynamicBucketAssigner.forTable(table.context, 'latest');
    expect(() => recordRouter(pk, 4, undefined)).toThrow(SinkUsageError);
    const route = recordRouter(pk, 4, assigner);
    const writerOfKey = new Map<string, number>();
    const writerOfSlot = new Map<string, number>();
    const STRING = parseTypeString('STRING NOT NULL');
    const BIGINT = parseTypeString('BIGINT NOT NULL');
    for (let i = 0; i < 300; i++) {
      const dt = `d${i % 2}`;
      const k = i % 37;
      const routed = route({ dt, k: BigInt(k), v: String(i) });
      const w = typeof routed === 'number' ? routed : await routed;
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThan(4);
      const key = `${dt}/${k}`;
      if (writerOfKey.has(key)) expect(writerOfKey.get(key), key).toBe(w);
      writerOfKey.set(key, w);
      // The bucket the assigner gave the key (it answers a known key from its index).
      const partition = serializeBinaryRow([STRING], [dt]);
      const bucket = assigner.assign(partition, keyHashOf([BIGINT], [BigInt(k)])) as number;
      expect(w).toBe(writerOfBucket(partition, bucket, 4));
      expect(bucketWriter(pk, 4)(partition, [dt], bucket)).toBe(w);
      const slot = `${dt}/${bucket}`;
      if (writerOfSlot.has(slot)) expect(writerOfSlot.get(slot), slot).toBe(w);
      writerOfSlot.set(slot, w);
    }
    // 37 keys per partition in buckets of 3: 13 buckets each, spread over all four writers.
    expect(writerOfSlot.size).toBe(26);
    expect(new Set(writerOfSlot.values()).size).toBe(4);
    // A record with an invalid key goes to writer 0 (its validation reports it) without a bucket.
    expect(route({ dt: 'd0', k: 'not a number', v: 'x' })).toBe(0);
    expect(route({ dt: 'd0', k: null, v: 'x' })).toBe(0);
    // Bucket 12 of d0 holds one key (37 = 12 × 3 + 1): two new keys still fit, so nothing took a place there.
    expect(assigner.assign(serializeBinaryRow([STRING], ['d0']), keyHashOf([BIGINT], [1000n]))).toBe(12);
    expect(assigner.assign(serializeBinaryRow([STRING], ['d0']), keyHashOf([BIGINT], [1001n]))).toBe(12);
    expect(assigner.assign(serializeBinaryRow([STRING], ['d0']), keyHashOf([BIGINT], [1002n]))).toBe(13);

    const append = buildInitialSchema({ fields: [{ name: 'k', type: 'BIGINT' }], options: { bucket: '-1' } });
    const rr = recordRouter(append, 3);
    expect([0, 1, 2, 3, 4, 5].map(() => rr({ k: 1n }))).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it("a writer's view of the shared assigner refuses a bucket the router sends to another writer", () => {
    const shared = { assign: () => 5 };
    const partition = serializeBinaryRow([], []);
    const owner = writerOfBucket(partition, 5, 3);
    expect(writerBucketAssigner(shared, owner, 3).assign(partition, 1)).toBe(5);
    const other = (owner + 1) % 3;
    expect(() => writerBucketAssigner(shared, other, 3).assign(partition, 1)).toThrow(WriterRoutingError);
    expect(() => writerBucketAssigner(shared, other, 3).assign(partition, 1)).toThrow(/bucket 5, which belongs to writer/);
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
        for (const r of read.toArray()) writers.add(sync(route(byValue.get((r.toJSON() as { v: string }).v)!)));
        rows += read.numRows;
        expect(writers.size, `writers of bucket ${bucket} of dt=${dt}`).toBeLessThanOrEqual(1);
      }
    }
    expect(rows).toBe(300);
  });
});
