import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CorruptFileError, SchemaError } from '../src/errors.js';
import { fieldById, logicalRowType, parseSchema, serializeSchema, trimmedPrimaryKeys, type TableSchema } from '../src/schema.js';
import { MAX_LENGTH } from '../src/types.js';
import { HAVE_FIXTURES, fixtureFiles } from './fixtures.js';

describe.skipIf(!HAVE_FIXTURES)('fixture schema files', () => {
  const files = fixtureFiles('schema', /^schema-\d+$/);
  it('found fixture schemas', () => expect(files.length).toBeGreaterThanOrEqual(4));
  for (const file of files) {
    it(`re-serializes ${file.split('/fixtures/paimon/')[1]} byte for byte`, () => {
      const bytes = readFileSync(file);
      const schema = parseSchema(bytes, file);
      expect(serializeSchema(schema)).toBe(bytes.toString('utf8'));
    });
  }

  it('parses pk-mor schema-0 as documented', () => {
    const file = fixtureFiles('schema', /^schema-0$/).find((f) => f.includes('pk-mor'));
    const s = parseSchema(readFileSync(file!, 'utf8'), file!);
    expect(s.version).toBe(3);
    expect(s.fields.map((f) => f.name)).toEqual(['f0', 'f1', 'f2', 'f3']);
    expect(s.fields[0]!.type).toEqual({ root: 'VARCHAR', nullable: false, length: MAX_LENGTH });
    expect(s.partitionKeys).toEqual(['f1']);
    expect(s.primaryKeys).toEqual(['f0', 'f1', 'f2']);
    expect(trimmedPrimaryKeys(s)).toEqual(['f0', 'f2']);
    expect(s.options).toMatchObject({ bucket: '2', 'bucket-key': 'f2' });
    expect(s.timeMillis).toBe(1756266931880);
  });
});

const base: TableSchema = {
  version: 3,
  id: 0,
  fields: [
    { id: 0, name: 'k', type: { root: 'INT', nullable: false } },
    { id: 1, name: 'dt', type: { root: 'VARCHAR', nullable: false, length: MAX_LENGTH } },
    { id: 2, name: 'v', type: { root: 'DECIMAL', nullable: true, precision: 10, scale: 2 }, description: 'value' },
  ],
  highestFieldId: 2,
  partitionKeys: ['dt'],
  primaryKeys: ['dt', 'k'],
  options: { bucket: '4' },
  comment: 'a table',
  timeMillis: 123,
};

describe('schema model', () => {
  it('serializes comment before timeMillis and round-trips', () => {
    const text = serializeSchema(base);
    expect(text).toContain('"comment" : "a table",\n  "timeMillis" : 123\n}');
    expect(text).toContain('"type" : "DECIMAL(10, 2)",\n    "description" : "value"');
    expect(parseSchema(text, 'schema-0')).toEqual(base);
  });

  it('applies defaults for old versions', () => {
    const v1 = parseSchema('{"id":0,"fields":[],"highestFieldId":-1,"partitionKeys":[],"primaryKeys":[],"options":{}}', 's');
    expect(v1.version).toBe(1);
    expect(v1.options).toEqual({ bucket: '1', 'file.format': 'orc' });
    expect(v1.timeMillis).toBe(0);
    const v2 = parseSchema('{"version":2,"id":0,"fields":[],"highestFieldId":-1,"options":{}}', 's');
    expect(v2.options).toEqual({ 'file.format': 'orc' });
    expect(v2.primaryKeys).toEqual([]);
    const v3 = parseSchema('{"version":3,"id":0,"fields":[],"highestFieldId":-1,"options":{}}', 's');
    expect(v3.options).toEqual({});
  });

  it('names the file in errors', () => {
    expect(() => parseSchema('{', 'wh/t/schema/schema-3')).toThrow(/wh\/t\/schema\/schema-3/);
    expect(() => parseSchema('{"id":0,"fields":[{"id":0,"name":"x","type":"NOPE"}],"highestFieldId":0}', 'p')).toThrow(CorruptFileError);
  });

  it('derives the trimmed primary key and fields', () => {
    expect(trimmedPrimaryKeys(base)).toEqual(['k']);
    expect(fieldById(base, 2)?.name).toBe('v');
    expect(fieldById(base, 9)).toBeUndefined();
    expect(logicalRowType(base).fields).toBe(base.fields);
    expect(() => trimmedPrimaryKeys({ ...base, primaryKeys: ['dt'] })).toThrow(SchemaError);
  });
});
