/**
 * Type changes on the Java-written ORC table (`orc-pk-mor`, a temp copy): the DOUBLE value column
 * `f3` is altered by tidemark and the Java-written ORC files are read through Paimon's cast rules,
 * merged by key (merge-on-read), filtered on the changed column (the ORC predicate must not use the
 * old DOUBLE statistics for a STRING filter). Each read casts from the type the file was written
 * with to the table's current type, as Java does (not through the intermediate types).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alterTable, openTable, SchemaChanges, type Table } from '@tidemark/core';
import { sharedFixturesDir } from './support/fixtures.js';
import { tempCopy } from './support/fixture-copy.js';

const fixtures = sharedFixturesDir('paimon-orc', 'type changes on a Java-written ORC table (read-orc-type-change.test.ts)');
async function copyTable(): Promise<Table> {
  const dir = await tempCopy(join(fixtures!, 'orc-pk-mor'), 'tidemark-orc-casts-');
  return openTable(join(dir, 'default.db', 'pk_table_scan_and_read_mor'));
}

async function retype(table: Table, type: string): Promise<Table> {
  await alterTable(table.fileIO, table.paths, [SchemaChanges.alterType('f3', type)]);
  return openTable(table.location, { fileIO: table.fileIO });
}

/** `[f0, f3]` of the result, sorted by f0. */
async function f3ByName(table: Table, where?: string): Promise<Array<[string, unknown]>> {
  const t = await table.newRead({ columns: ['f0', 'f3'], ...(where ? { where } : {}) }).toArrowTable();
  const out: Array<[string, unknown]> = [];
  for (let i = 0; i < t.numRows; i++) out.push([t.getChild('f0')!.get(i) as string, t.getChild('f3')!.get(i)]);
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

const TWO_ROADS = 'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.';
const LATEST: Array<[string, number]> = [
  ['Alice', 19.1],
  ['Bob', 12.1],
  ['David', 17.1],
  ['Emily', 13.1],
  ['Lucy', 14.1],
  ['Marco', 21.1],
  ['Marco2', 31.1],
  ['Paul', 18.1],
  ['Skye', 21.0],
  ['Skye2', 31.0],
  [TWO_ROADS, 11.0],
];

describe.skipIf(fixtures === null)('type changes on a Java-written ORC table', () => {
  it('NumericToStringCastRule: DOUBLE → STRING prints Double.toString (21.0, not 21), merged and filtered on the new type', async () => {
    const t = await retype(await copyTable(), 'STRING');
    expect(await f3ByName(t)).toEqual(LATEST.map(([k, v]) => [k, v === 21 ? '21.0' : v === 31 ? '31.0' : v === 11 ? '11.0' : String(v)]));
    expect(await f3ByName(t, "f3 = '21.0'")).toEqual([['Skye', '21.0']]);
    // As strings, '11.0' < '9' although 11.0 > 9.0: old DOUBLE bounds must not decide this filter.
    expect((await f3ByName(t, "f3 < '12'")).map(([k]) => k)).toEqual([TWO_ROADS]);
  });

  it('NumericPrimitiveCastRule: DOUBLE → STRING → INT reads the DOUBLE files straight as INT (truncated)', async () => {
    const t = await retype(await retype(await copyTable(), 'STRING'), 'INT');
    expect(await f3ByName(t)).toEqual(LATEST.map(([k, v]) => [k, Math.trunc(v)]));
    expect((await f3ByName(t, 'f3 = 21')).map(([k]) => k)).toEqual(['Marco', 'Skye']);
  });

  it('NumericPrimitiveToDecimalCastRule: DOUBLE → DECIMAL(3, 0) rounds Double.toString HALF_UP', async () => {
    const t = await retype(await copyTable(), 'DECIMAL(3, 0)');
    const out = await f3ByName(t);
    expect(out.map(([k, v]) => [k, v === null ? null : Number(String(v))])).toEqual(LATEST.map(([k, v]) => [k, Math.round(v)]));
  });
});
