/**
 * Compaction over files written before a column type change (beyond widening): the inputs are read
 * through Paimon's cast rules and rewritten in the current type, so the rows read the same before
 * and after, and the rewritten files carry the current schema (their stats then prune again).
 */
import { describe, expect, it } from 'vitest';
import { SchemaChanges, alterTable, openTable } from '@tidemark/core';
import { compactAppendTable, compactPrimaryKeyTable } from '../src/index.js';
import { createTable, tableRows } from './compact-helpers.js';

describe('compaction of files of an older column type', () => {
  it('append table, DOUBLE → STRING and STRING → DECIMAL(5, 1): rewritten with the cast values', async () => {
    const table = await createTable({
      fields: [
        { name: 'id', type: 'INT' },
        { name: 'd', type: 'DOUBLE' },
        { name: 's', type: 'STRING' },
      ],
    });
    for (const [id, d, s] of [
      [1, 1e7, '1.25'],
      [2, 0.5, '99999.99'],
    ] as const)
      await table.append([{ id, d, s }]);
    await alterTable(table.fileIO, table.paths, [SchemaChanges.alterType('d', 'STRING'), SchemaChanges.alterType('s', 'DECIMAL(5, 1)')]);
    const evolved = await openTable(table.location, { fileIO: table.fileIO });
    await evolved.append([{ id: 3, d: 'new', s: '7.0' }]);
    const before = await tableRows(evolved);
    // Double.toString; BigDecimal HALF_UP; a value past DECIMAL(5, 1) reads NULL (as in Java).
    expect(before).toEqual(['[1,"1.0E7",{"unscaled":"13n","scale":1}]', '[2,"0.5",null]', '[3,"new",{"unscaled":"70n","scale":1}]']);
    await compactAppendTable(evolved, { full: true });
    expect(await tableRows(evolved)).toEqual(before);
    const files = (await evolved.newRead().plan()).files();
    expect(files.map((f) => f.schemaId)).toEqual([1]);
    expect((await evolved.newRead({ where: "d = '1.0E7'" }).toArrowTable()).numRows).toBe(1);
  });

  it('primary-key table, STRING → INT value column: full compaction merges and casts', async () => {
    const table = await createTable({
      fields: [
        { name: 'k', type: 'INT NOT NULL' },
        { name: 'v', type: 'STRING' },
      ],
      primaryKeys: ['k'],
      options: { bucket: '1' },
    });
    await table.append([
      { k: 1, v: '10.9' },
      { k: 2, v: '-20' },
    ]);
    await table.append([{ k: 1, v: '11' }]);
    await alterTable(table.fileIO, table.paths, [SchemaChanges.alterType('v', 'INT')]);
    const evolved = await openTable(table.location, { fileIO: table.fileIO });
    await evolved.append([{ k: 3, v: 30 }]);
    const before = await tableRows(evolved);
    expect(before).toEqual(['[1,11]', '[2,-20]', '[3,30]']);
    await compactPrimaryKeyTable(evolved, { full: true });
    expect(await tableRows(evolved)).toEqual(before);
    expect(new Set((await evolved.newRead().plan()).files().map((f) => f.schemaId))).toEqual(new Set([1]));
  });
});
