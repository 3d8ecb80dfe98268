/**
 * Deleting by a key list (`table.delete(keys)`, what `tidemark delete --input` runs) against a
 * model: thousands of keys, present and absent, repeated, in several buckets, single-column and
 * composite keys, on a table whose keys were updated and deleted before. The rows left, the count
 * reported and the plan must match the model.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '../src/index.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

let n = 0;
async function tableOf(spec: TableSpec): Promise<Table> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://key-list-delete-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return openTable(catalog.tableLocation('db.t'), { fileIO: io });
}

async function keysLeft(table: Table, key: (r: Record<string, unknown>) => string): Promise<string[]> {
  return (await table.newRead().toArrowTable())
    .toArray()
    .map((r) => key(r.toJSON() as Record<string, unknown>))
    .sort();
}

describe('delete by a key list', () => {
  it('single-column key: 3,000 keys (present, absent, repeated) leave exactly the model rows', async () => {
    const table = await tableOf({
      fields: [
        { name: 'id', type: 'BIGINT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['id'],
      options: { bucket: '4' },
    });
    const random = seededRandom(1425);
    const model = new Map<bigint, string>();
    for (let w = 0; w < 3; w++) {
      const rows = Array.from({ length: 4000 }, () => ({ id: BigInt(Math.floor(random() * 10_000)), v: `w${w}` }));
      await table.append(rows);
      for (const r of rows) model.set(r.id, r.v);
    }
    const gone = [...model.keys()].slice(0, 200);
    await table.delete(gone.map((id) => ({ id })));
    for (const id of gone) model.delete(id);
    const keys = Array.from({ length: 3000 }, () => ({ id: BigInt(Math.floor(random() * 12_000)) }));
    const present = new Set(keys.map((k) => k.id).filter((id) => model.has(id)));
    const dry = await table.delete(keys, { dryRun: true });
    expect(dry.plan.rowsMatched).toBe(present.size);
    const { deleted } = await table.delete(keys);
    expect(deleted).toBe(present.size);
    for (const id of present) model.delete(id);
    expect(await keysLeft(table, (r) => String(r.id))).toEqual([...model.keys()].map(String).sort());
  });

  it('composite key with a string column: a thousand keys across partitions and buckets', async () => {
    const table = await tableOf({
      fields: [
        { name: 'dt', type: 'STRING NOT NULL' },
        { name: 'a', type: 'INT NOT NULL' },
        { name: 'b', type: 'STRING NOT NULL' },
        { name: 'v', type: 'DOUBLE' },
      ],
      partitionKeys: ['dt'],
      primaryKeys: ['dt', 'a', 'b'],
      options: { bucket: '3' },
    });
    const random = seededRandom(26);
    const key = (r: { dt: unknown; a: unknown; b: unknown }): string => `${String(r.dt)}|${String(r.a)}|${String(r.b)}`;
    const model = new Set<string>();
    const rows = Array.from({ length: 5000 }, () => ({
      dt: `2024-01-0${1 + Math.floor(random() * 3)}`,
      a: Math.floor(random() * 50),
      b: `name-${Math.floor(random() * 40)}`,
      v: random(),
    }));
    await table.append(rows);
    for (const r of rows) model.add(key(r));
    const keys = Array.from({ length: 1000 }, () => ({
      dt: `2024-01-0${1 + Math.floor(random() * 4)}`,
      a: Math.floor(random() * 60),
      b: `name-${Math.floor(random() * 45)}`,
    }));
    const present = new Set(keys.map(key).filter((k) => model.has(k)));
    const { deleted } = await table.delete(keys);
    expect(deleted).toBe(present.size);
    for (const k of present) model.delete(k);
    expect(await keysLeft(table, key as (r: Record<string, unknown>) => string)).toEqual([...model].sort());
  });
});
