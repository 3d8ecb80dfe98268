/**
 * Arrow input as Arrow users build it: apache-arrow's `tableFromArrays` and `tableFromJSON`
 * dictionary-encode strings, make every JS number a Float64, every Date a millisecond timestamp
 * and an all-null column of type Null. Each is decoded to the column's type when the values are
 * exactly representable, and refused naming the column and row when they are not.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, type Table, type TableSpec } from '../src/index.js';

let n = 0;
async function table(spec: TableSpec): Promise<Table> {
  const catalog = new FileSystemCatalog(`memory://arrow-encodings-${process.pid}-${++n}/wh`, { fileIO: new MemoryFileIO() });
  await catalog.createTable('db.t', spec);
  return catalog.getTable('db.t');
}

async function rows(t: Table): Promise<Array<Record<string, unknown>>> {
  const out = (await t.newRead().toArrowTable()).toArray().map((r: { toJSON(): Record<string, unknown> }) => ({ ...r.toJSON() }));
  return out.sort((a, b) => Number(a['id']) - Number(b['id']));
}

const DAY = 86_400_000;
const fields = [
  { name: 'id', type: 'INT' },
  { name: 'name', type: 'STRING' },
  { name: 'big', type: 'BIGINT' },
  { name: 'score', type: 'DOUBLE' },
  { name: 'day', type: 'DATE' },
  { name: 'flag', type: 'BOOLEAN' },
];

describe('Arrow encodings of a column type are decoded', () => {
  it('tableFromArrays: dictionary strings, Float64 integers, Date timestamps, Int32 doubles', async () => {
    const t = await table({ fields });
    const input = arrow.tableFromArrays({
      id: [3, 1, 2, 4],
      name: ['b', 'a', 'b', null],
      big: [2 ** 40, -5, 0, null],
      score: Int32Array.from([7, 8, 9, 10]),
      day: [new Date(3 * DAY), new Date(0), null, new Date(-DAY)],
      flag: [true, false, null, true],
    });
    expect(String(input.schema.fields[1]!.type)).toBe('Dictionary<Int32, Utf8>');
    expect((await t.append(input)).status).toBe('committed');
    expect(await rows(t)).toEqual([
      { id: 1, name: 'a', big: -5n, score: 8, day: 0, flag: false },
      { id: 2, name: 'b', big: 0n, score: 9, day: null, flag: null },
      { id: 3, name: 'b', big: 2n ** 40n, score: 7, day: 3 * DAY, flag: true },
      { id: 4, name: null, big: null, score: 10, day: -DAY, flag: true },
    ]);
  });

  it('tableFromJSON, an all-null column, and a dictionary whose values hold nulls', async () => {
    const t = await table({ fields: [...fields, { name: 'note', type: 'STRING' }] });
    const json = arrow.tableFromJSON([
      { id: 1, name: 'x', note: null },
      { id: 2, name: 'y', note: null },
    ]);
    expect((await t.append(json)).status).toBe('committed');
    const dictionary = arrow.vectorFromArray(['p', null, 'q'], new arrow.Utf8());
    const dict = arrow.makeVector(
      arrow.makeData({
        type: new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8()),
        length: 4,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b1011),
        data: Int8Array.of(2, 1, 0, 0),
        dictionary,
      }),
    );
    const ids = arrow.vectorFromArray(Int32Array.of(3, 4, 5, 6));
    expect((await t.append(new arrow.Table({ id: ids, name: dict }))).status).toBe('committed');
    expect((await rows(t)).map((r) => [r['id'], r['name'], r['note']])).toEqual([
      [1, 'x', null],
      [2, 'y', null],
      [3, 'q', null],
      [4, null, null],
      [5, null, null],
      [6, 'p', null],
    ]);
  });

  it('LargeUtf8 strings are written as STRING', async () => {
    const t = await table({ fields });
    const name = arrow.vectorFromArray(['long', 'er'], new arrow.LargeUtf8());
    expect((await t.append(new arrow.Table({ id: arrow.vectorFromArray(Int32Array.of(1, 2)), name }))).status).toBe('committed');
    expect((await rows(t)).map((r) => r['name'])).toEqual(['long', 'er']);
  });
});

describe('values the column type cannot hold exactly are refused, naming column and row', () => {
  const cases: Array<[string, Record<string, unknown[]>, RegExp]> = [
    ['a fraction into INT', { id: [1, 2.5] }, /column 'id'.*Float64.*2\.5 at row 1 is not an integer/],
    ['an INT out of range', { id: [2 ** 31] }, /column 'id'.*2147483648 at row 0 does not fit/],
    ['a BIGINT beyond 2^53 as Float64', { id: [1], big: [2 ** 60] }, /column 'big'.*at row 0 is beyond 2\^53/],
    ['a time of day into DATE', { id: [1], day: [new Date(DAY + 1000)] }, /column 'day'.*row 0 is not midnight UTC/],
  ];
  for (const [what, columns, message] of cases) {
    it(what, async () => {
      const t = await table({ fields });
      await expect(t.append(arrow.tableFromArrays(columns as Record<string, unknown[]>))).rejects.toThrow(message);
      expect(await t.snapshotManager.latestId()).toBeNull();
    });
  }
});
