/**
 * The Java-written fixture tables (../shared/fixtures/paimon) carry no data-file index (none of
 * them was written with `file-index.*` options): with the file-index read path in place, every
 * `=` filter on them still returns exactly the rows of a full read filtered here, and no file is
 * asked for an index.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { openTable, type Predicate } from '@tidemark/core';
import { canonicalRows, type Canon } from './support/arrow-canon.js';
import { fixturesDir } from './support/fixtures.js';

const dir = fixturesDir('file index on Java fixtures');
const TABLES = [
  ['pk-mor', 'pk_table_scan_and_read_mor'],
  ['pk-dv', 'pk_table_scan_and_read_dv'],
  ['append-schema-evolution', 'append_table_with_alter_table'],
] as const;
const PLAIN = new Set(['VARCHAR', 'CHAR', 'INT', 'BIGINT', 'SMALLINT', 'TINYINT', 'DOUBLE', 'DATE']);
const key = (v: Canon): string => (typeof v === 'bigint' ? `${v}n` : JSON.stringify(v));

describe.skipIf(dir === null)('Java-written fixtures with the file-index read path', () => {
  for (const [fixture, name] of TABLES) {
    it(`${fixture}: every = filter returns the filtered full read; no file has an index`, async () => {
      const location = join(dir!, fixture, 'default.db', name);
      const table = await openTable(location, { fileIO: new LocalFileIO() });
      const fields = table.schema().fields;
      const plan = await table.newRead().plan();
      for (const split of plan.splits) {
        for (const f of split.files) {
          expect(f.meta.embeddedIndex).toBeNull();
          expect(f.meta.extraFiles).toEqual([]);
        }
      }
      const all = canonicalRows(await table.newRead().toArrowTable(), fields);
      expect(all.length).toBeGreaterThan(0);
      for (const field of fields.filter((f) => PLAIN.has(f.type.root))) {
        const values = [...new Map(all.filter((r) => r[field.name] !== null).map((r) => [key(r[field.name]!), r[field.name]!])).values()];
        for (const value of values) {
          const where: Predicate = { kind: 'compare', op: '=', column: field.name, type: field.type, value };
          const read = table.newRead({ where });
          const got = canonicalRows(await read.toArrowTable(), fields).map((r) =>
            JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
          );
          const expected = all
            .filter((r) => r[field.name] !== null && key(r[field.name]!) === key(value))
            .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
          expect(got.sort(), `${field.name} = ${key(value)}`).toEqual(expected.sort());
          expect(read.fileIndexStats.filesChecked).toBe(0);
        }
      }
    });
  }
});
