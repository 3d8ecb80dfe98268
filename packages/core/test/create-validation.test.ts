/**
 * Options checked when a table is created (and altered), as Paimon's `SchemaValidation` checks
 * them: a table whose options make every write fail is refused before `schema-0` exists, naming
 * the option; unknown keys are reported at create with the nearest known key.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import {
  FileSystemCatalog,
  SchemaChanges,
  SchemaValidationError,
  applySchemaChanges,
  buildInitialSchema,
  createTable,
  type TableSpec,
} from '../src/index.js';

const fields = [
  { name: 'id', type: 'INT' },
  { name: 'v', type: 'INT' },
  { name: 'p', type: 'STRING' },
];
const pk = (options: Record<string, string>, extra: Partial<TableSpec> = {}): TableSpec => ({
  fields,
  primaryKeys: ['id'],
  options,
  ...extra,
});

describe('create refuses options that make the table unusable', () => {
  const refused: Array<[string, TableSpec, RegExp]> = [
    [
      'an unknown merge engine',
      pk({ 'merge-engine': 'bogus' }),
      /'merge-engine'.*'bogus'.*deduplicate.*partial-update.*aggregation.*first-row/,
    ],
    ['an unknown changelog producer', pk({ 'changelog-producer': 'lookups' }), /'changelog-producer'.*'lookups'.*'lookup'/],
    ['a sequence field that is not a column', pk({ 'sequence.field': 'nope' }), /'sequence.field'.*'nope'.*not a column/],
    ['a sequence field named twice', pk({ 'sequence.field': 'v,v' }), /'sequence.field'.*'v'.*twice/],
    [
      'an aggregation on the sequence field',
      pk({ 'sequence.field': 'v', 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'sum' }),
      /sequence field 'v'.*aggregate/,
    ],
    ['a sequence field on a first-row table', pk({ 'sequence.field': 'v', 'merge-engine': 'first-row' }), /'sequence.field'.*first-row/],
    [
      'an unknown aggregate function',
      pk({ 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'bogus' }),
      /'fields.v.aggregate-function'.*'bogus'/,
    ],
    [
      'an unknown aggregate function on a deduplicate table',
      pk({ 'fields.v.aggregate-function': 'bogus' }),
      /'fields.v.aggregate-function'.*'bogus'/,
    ],
    [
      'an unknown default aggregate function',
      pk({ 'merge-engine': 'aggregation', 'fields.default-aggregate-function': 'median' }),
      /'fields.default-aggregate-function'.*'median'/,
    ],
    [
      'an aggregate function that cannot take the type',
      pk({ 'merge-engine': 'aggregation', 'fields.p.aggregate-function': 'sum' }),
      /'sum'.*'p'/,
    ],
    [
      'a per-field option of a column that does not exist',
      pk({ 'fields.nope.aggregate-function': 'sum' }),
      /'fields.nope.aggregate-function'.*'nope'.*not a column/,
    ],
    ['num-sorted-run.compaction-trigger = 0', pk({ 'num-sorted-run.compaction-trigger': '0' }), /'num-sorted-run.compaction-trigger'.*'0'/],
    ['num-levels = 1', pk({ 'num-levels': '1' }), /'num-levels'/],
    [
      'a bad sequence sort order',
      pk({ 'sequence.field': 'v', 'sequence.field.sort-order': 'down' }),
      /'sequence.field.sort-order'.*'down'/,
    ],
    ['snapshot.num-retained.min = 0', pk({ 'snapshot.num-retained.min': '0' }), /'snapshot.num-retained.min'.*at least 1/],
    [
      'snapshot.num-retained.min above the max',
      pk({ 'snapshot.num-retained.min': '5', 'snapshot.num-retained.max': '2' }),
      /'snapshot.num-retained.min'.*'snapshot.num-retained.max'/,
    ],
    [
      'a changelog producer on an append table',
      { fields, options: { 'changelog-producer': 'input' } },
      /'changelog-producer'.*primary key/,
    ],
    [
      'first-row with the input changelog producer',
      pk({ 'merge-engine': 'first-row', 'changelog-producer': 'input' }),
      /first-row.*'none' or 'lookup'/,
    ],
    [
      'a primary key without the partition key',
      pk({}, { partitionKeys: ['p'] }),
      /primary key \(id\) must include the partition key\(s\) p.*\(id, p\)/,
    ],
    ['a bad ignore-delete value', pk({ 'ignore-delete': 'yes' }), /'ignore-delete'.*'yes'/],
  ];
  for (const [what, spec, message] of refused) {
    it(`refuses ${what}, naming the option, and writes nothing`, async () => {
      expect(() => buildInitialSchema(spec)).toThrow(SchemaValidationError);
      expect(() => buildInitialSchema(spec)).toThrow(message);
      const io = new MemoryFileIO();
      await expect(createTable(io, 'memory://v/t', spec)).rejects.toThrow(message);
      const left: string[] = [];
      for await (const f of io.list('memory://v/t')) left.push(f.path);
      expect(left).toEqual([]);
      const catalog = new FileSystemCatalog('memory://v/wh', { fileIO: io });
      await expect(catalog.createTable('db.t', spec)).rejects.toThrow(message);
      expect(await catalog.tableExists('db.t')).toBe(false);
    });
  }

  it('accepts what Paimon accepts', () => {
    const ok: TableSpec[] = [
      pk({ 'merge-engine': 'aggregation', 'fields.v.aggregate-function': 'sum', 'fields.default-aggregate-function': 'last_value' }),
      pk({ 'merge-engine': 'partial-update', 'fields.v.sequence-group': 'p' }),
      pk({ 'merge-engine': 'first-row', 'changelog-producer': 'lookup' }),
      pk({ 'sequence.field': 'v', 'sequence.field.sort-order': 'descending', 'num-sorted-run.compaction-trigger': '1' }),
      pk({ 'fields.v.ignore-retract': 'true', 'fields.p.stats-mode': 'full' }),
      pk({}, { primaryKeys: ['id', 'p'], partitionKeys: ['p'] }),
      { fields, options: { 'changelog-producer': 'none' } },
    ];
    for (const spec of ok) expect(() => buildInitialSchema(spec)).not.toThrow();
  });

  it('alter refuses the same options', async () => {
    const schema = buildInitialSchema(pk({}));
    const alter = (key: string, value: string) =>
      applySchemaChanges(schema, [SchemaChanges.setOption(key, value)], { hasSnapshots: false });
    await expect(alter('merge-engine', 'bogus')).rejects.toThrow(/'merge-engine'.*'bogus'/);
    await expect(alter('sequence.field', 'nope')).rejects.toThrow(/'sequence.field'.*'nope'/);
    await expect(alter('fields.v.aggregate-function', 'bogus')).rejects.toThrow(/'bogus'/);
  });
});

describe('unknown option keys at create', () => {
  it('warn once, naming the nearest known key; a misspelt deletion-vectors key is not silent', async () => {
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m) };
    const io = new MemoryFileIO();
    await createTable(io, 'memory://u/t', pk({ 'deletion-vector.enabled': 'true', 'totally-new-key': 'x' }), { logger });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/unknown table option 'deletion-vector.enabled' \(did you mean 'deletion-vectors.enabled'\?\)/);
    expect(warnings[1]).toMatch(/unknown table option 'totally-new-key'/);
    expect(warnings[1]).not.toMatch(/did you mean/);
    const catalog = new FileSystemCatalog('memory://u/wh', { fileIO: io });
    await catalog.createTable('db.t', pk({ bukcet: '2' }), { logger });
    expect(warnings[2]).toMatch(/unknown table option 'bukcet' \(did you mean 'bucket'\?\)/);
  });
});
