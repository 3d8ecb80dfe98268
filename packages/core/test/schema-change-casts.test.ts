/**
 * Which column type changes `alterTable` accepts: exactly those Paimon's `SchemaManager` accepts for
 * an `UpdateColumnType` — `DataTypeCasts.supportsCast(old, new, allowExplicit)` and a cast rule from
 * `CastExecutors.resolve` — with its NOT NULL handling and the options that narrow it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { parseTypeString, typeToString } from '@tidemark/format';
import { FileSystemCatalog, SchemaChangeError, SchemaChanges, TablePaths, alterTable, type TableSpec } from '../src/index.js';
import { supportsCast, typeChangeRefusal } from '../src/cast/cast-rules.js';

let n = 0;
async function setup(spec: TableSpec): Promise<{ io: MemoryFileIO; paths: TablePaths }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://schema-change-casts-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return { io, paths: new TablePaths(catalog.tableLocation('db.t')) };
}

const TYPES = [
  'BOOLEAN',
  'TINYINT',
  'SMALLINT',
  'INT',
  'BIGINT',
  'FLOAT',
  'DOUBLE',
  'DECIMAL(10, 2)',
  'CHAR(5)',
  'STRING',
  'BINARY(4)',
  'BYTES',
  'DATE',
  'TIME',
  'TIMESTAMP(3)',
  'TIMESTAMP(3) WITH LOCAL TIME ZONE',
  'ARRAY<INT>',
  'MAP<STRING, INT>',
  'ROW<a INT>',
  'MULTISET<INT>',
];

/**
 * Paimon's answer for a change from the row type to the column type (types in TYPES order):
 * I = implicit cast (also allowed with `disable-explicit-type-casting`), E = explicit cast only,
 * . = refused (no cast in DataTypeCasts, or no executor in CastExecutors). Read off the Java
 * source: e.g. TIMESTAMP → TINYINT is an explicit cast in DataTypeCasts but
 * TimestampToNumericPrimitiveCastRule targets only INT and BIGINT; NumericPrimitiveToTimestamp
 * has an executor only for INT and BIGINT; MULTISET has no to-string rule.
 */
const MATRIX = `
BOOLEAN          I E E E E E E E E E . . . . . . . . . .
TINYINT          E I I I I I I I E E . . . . . . . . . .
SMALLINT         E E I I I I I I E E . . . . . . . . . .
INT              E E E I I I I I E E . . . . E E . . . .
BIGINT           E E E E I I I I E E . . . . E E . . . .
FLOAT            . E E E E I I I E E . . . . . . . . . .
DOUBLE           . E E E E E I I E E . . . . . . . . . .
DECIMAL          . E E E E I I I E E . . . . . . . . . .
CHAR             E E E E E E E E I I E E E E E E . . . .
STRING           E E E E E E E E E I E E E E E E . . . .
BINARY           . . . . . . . . E E I I . . . . . . . .
BYTES            . . . . . . . . E E E I . . . . . . . .
DATE             . . . . . . . . E E . . I . E E . . . .
TIME             . . . . . . . . E E . . . I E E . . . .
TIMESTAMP        . . . E E . . . E E . . I I I I . . . .
TIMESTAMP_LTZ    . . . E E . . . E E . . E E I I . . . .
ARRAY            . . . . . . . . E E . . . . . . I . . .
MAP              . . . . . . . . E E . . . . . . . I . .
ROW              . . . . . . . . E E . . . . . . . . I .
MULTISET         . . . . . . . . . . . . . . . . . . . I`;

describe('the change matrix', () => {
  it('every pair of type roots decides as Paimon (DataTypeCasts + CastExecutors)', () => {
    const expected = MATRIX.trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).slice(1));
    const actual = TYPES.map((from) =>
      TYPES.map((to) => {
        const [a, b] = [parseTypeString(from), parseTypeString(to)];
        if (typeChangeRefusal(a, b) !== null) return '.';
        return supportsCast(a, b, false) ? 'I' : 'E';
      }),
    );
    expect(actual).toEqual(expected);
  });

  it('alterTable accepts changes beyond widening (STRING → BYTES, DOUBLE → INT, BOOLEAN → STRING, INT → STRING, …)', async () => {
    const changes: Array<[string, string]> = [
      ['STRING', 'BYTES'],
      ['DOUBLE', 'INT'],
      ['BOOLEAN', 'STRING'],
      ['INT', 'STRING'],
      ['BIGINT', 'INT'],
      ['DECIMAL(10, 2)', 'DECIMAL(5, 1)'],
      ['VARCHAR(10)', 'VARCHAR(3)'],
      ['TIMESTAMP(6)', 'TIMESTAMP(3)'],
      ['TIMESTAMP(3)', 'DATE'],
      ['STRING', 'TIMESTAMP(3) WITH LOCAL TIME ZONE'],
      ['ARRAY<STRING>', 'STRING'],
    ];
    const { io, paths } = await setup({ fields: changes.map(([from], i) => ({ name: `c${i}`, type: from })) });
    const s = await alterTable(
      io,
      paths,
      changes.map(([, to], i) => SchemaChanges.alterType(`c${i}`, to)),
    );
    expect(s.fields.map((f) => typeToString(f.type))).toEqual(changes.map(([, to]) => typeToString(parseTypeString(to))));
  });
});

describe('options and NOT NULL, as SchemaManager checks them', () => {
  it("'disable-explicit-type-casting' = 'true' leaves only implicit casts", async () => {
    const { io, paths } = await setup({
      fields: [
        { name: 'a', type: 'BIGINT' },
        { name: 'b', type: 'INT' },
        { name: 'c', type: 'VARCHAR(10)' },
      ],
      options: { 'disable-explicit-type-casting': 'true' },
    });
    for (const [col, to] of [
      ['a', 'INT'],
      ['b', 'STRING'],
    ] as const) {
      const e = await alterTable(io, paths, [SchemaChanges.alterType(col, to)]).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SchemaChangeError);
      expect((e as Error).message).toMatch(/only implicit \(lossless\) casts are allowed while 'disable-explicit-type-casting' is true/);
    }
    // Implicit in DataTypeCasts: widening, and (by root) a shorter VARCHAR.
    const s = await alterTable(io, paths, [SchemaChanges.alterType('b', 'DOUBLE'), SchemaChanges.alterType('c', 'VARCHAR(3)')]);
    expect(s.fields.map((f) => typeToString(f.type))).toEqual(['BIGINT', 'DOUBLE', 'VARCHAR(3)']);
  });

  it("nullable → NOT NULL only with 'alter-column-null-to-not-null.disabled' = 'false'", async () => {
    const refused = await setup({ fields: [{ name: 'a', type: 'INT' }] });
    await expect(alterTable(refused.io, refused.paths, [SchemaChanges.alterType('a', 'BIGINT NOT NULL')])).rejects.toThrow(
      /a nullable column cannot become NOT NULL \(set 'alter-column-null-to-not-null.disabled' = 'false'/,
    );
    const allowed = await setup({ fields: [{ name: 'a', type: 'INT' }], options: { 'alter-column-null-to-not-null.disabled': 'false' } });
    const s = await alterTable(allowed.io, allowed.paths, [SchemaChanges.alterType('a', 'STRING NOT NULL')]);
    expect(s.fields[0]!.type).toEqual(parseTypeString('STRING NOT NULL'));
  });

  it('keepNullability keeps NOT NULL through a cast (Spark-style UpdateColumnType)', async () => {
    const { io, paths } = await setup({ fields: [{ name: 'a', type: 'DOUBLE NOT NULL' }] });
    const s = await alterTable(io, paths, [SchemaChanges.alterType('a', 'INT', true)]);
    expect(s.fields[0]!.type).toEqual({ root: 'INT', nullable: false });
  });
});
