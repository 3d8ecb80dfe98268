/**
 * Compaction of primary-key tables with `sequence.field`: records of a key are merged in the
 * order of the field (then the sequence number), so out-of-order arrivals give the same rows
 * before and after universal and full compaction. A delete dropped by a compaction into the top
 * level no longer hides a later record with a smaller field value, as in Java Paimon.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { compactPrimaryKeyTable } from '../src/index.js';
import { seededRandom as random } from '../../../test/support/seeded-random.mjs';

async function table(options: Record<string, string>): Promise<Table> {
  const warehouse = await mkdtemp(join(tmpdir(), 'tidemark-pk-seq-'));
  const catalog = new FileSystemCatalog(warehouse);
  await catalog.createTable('db.t', {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'ts', type: 'BIGINT' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', 'sequence.field': 'ts', 'write-only': 'true', ...options },
  });
  return openTable(catalog.tableLocation('db.t'));
}

async function rows(t: Table, snapshotId?: number): Promise<string[]> {
  const out = await t.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  return out
    .toArray()
    .map((r) => JSON.stringify(r.toJSON(), (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)))
    .sort();
}

describe('compaction with sequence.field', () => {
  for (const order of ['ascending', 'descending']) {
    it(`${order}: out-of-order records read the same before and after compaction`, async () => {
      const t = await table({ 'sequence.field.sort-order': order });
      const rnd = random(order.length);
      const best = new Map<number, { v: string; ts: number }>();
      const commits = async (n: number, tag: string): Promise<string[]> => {
        for (let c = 0; c < n; c++) {
          const batch = new Map<number, { k: number; v: string; ts: bigint }>();
          for (let i = 0; i < 15; i++) {
            const k = Math.floor(rnd() * 30);
            batch.set(k, { k, v: `${tag}${c}-${i}`, ts: BigInt(Math.floor(rnd() * 50)) });
          }
          await t.append([...batch.values()]);
          for (const r of batch.values()) {
            const cur = best.get(r.k);
            const ts = Number(r.ts);
            if (cur === undefined || (order === 'ascending' ? ts >= cur.ts : ts <= cur.ts)) best.set(r.k, { v: r.v, ts });
          }
        }
        return [...best.entries()].map(([k, x]) => JSON.stringify({ k, v: x.v, ts: x.ts })).sort();
      };
      const model1 = await commits(8, 'a');
      expect(await rows(t)).toEqual(model1);
      const latest1 = (await t.snapshotManager.latest())!.id;
      expect((await compactPrimaryKeyTable(t)).snapshotId).toBe(latest1 + 1);
      expect(await rows(t)).toEqual(model1);

      const model2 = await commits(3, 'b');
      expect(await rows(t)).toEqual(model2);
      const latest2 = (await t.snapshotManager.latest())!.id;
      expect((await compactPrimaryKeyTable(t, { full: true })).snapshotId).toBe(latest2 + 1);
      expect(await rows(t)).toEqual(model2);
      expect(await rows(t, latest1)).toEqual(model1);
    });
  }

  it('a delete dropped at the top level stops hiding later records with a smaller field value', async () => {
    const t = await table({});
    await t.append([{ k: 1, v: 'a', ts: 100n }]);
    await t.delete([{ k: 1 }]); // -D carries the current row, ts = 100
    await t.append([{ k: 1, v: 'older', ts: 50n }]);
    expect(await rows(t)).toEqual([]); // the -D (ts 100) outranks ts 50
    // Compact first, then write the older record again: the -D is gone.
    const t2 = await table({});
    await t2.append([{ k: 1, v: 'a', ts: 100n }]);
    await t2.delete([{ k: 1 }]);
    await compactPrimaryKeyTable(t2, { full: true });
    await t2.append([{ k: 1, v: 'older', ts: 50n }]);
    expect(await rows(t2)).toEqual(['{"k":1,"v":"older","ts":50}']);
  });
});
