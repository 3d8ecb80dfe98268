import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { parseTypeString, serializeBinaryRow, type TableSchema } from '@tidemark/format';
import {
  FileStorePathFactory,
  InvalidOptionError,
  coreOptions,
  metadataPaths,
  tableContext,
  tableOptions,
  withSchema,
} from '../src/index.js';

function schema(options: Record<string, string>, partitionKeys: string[] = ['dt', 'h'], primaryKeys: string[] = []): TableSchema {
  return {
    version: 3,
    id: 2,
    fields: [
      { id: 0, name: 'id', type: parseTypeString('BIGINT NOT NULL') },
      { id: 1, name: 'dt', type: parseTypeString('DATE') },
      { id: 2, name: 'h', type: parseTypeString('STRING') },
    ],
    highestFieldId: 2,
    partitionKeys,
    primaryKeys,
    options,
    timeMillis: 0,
  };
}

describe('CoreOptions', () => {
  it("applies Paimon's defaults for the primary-key write options", () => {
    const o = tableOptions({ options: {}, primaryKeys: ['id'] });
    expect(o.numSortedRunCompactionTrigger).toBe(5);
    expect(o.numSortedRunStopTrigger).toBe(8);
    expect(o.numLevels).toBe(6);
    expect(o.compactionMaxSizeAmplificationPercent).toBe(200);
    expect(o.compactionSizeRatio).toBe(1);
    expect(o.fullCompactionDeltaCommits).toBeNull();
    expect(o.writeOnly).toBe(false);
    expect(o.writeBufferSize).toBe(256 * 1024 * 1024);
    expect(o.writeBufferSpillable).toBeNull();
    expect(o.targetFileSize).toBe(128 * 1024 * 1024);
    expect(o.dynamicBucketTargetRowNum).toBe(2_000_000);
    expect(o.dynamicBucketInitialBuckets).toBeNull();
    expect(o.commitForceCompact).toBe(false);
    expect(o.changelogProducer).toBe('none');
    expect(o.sequenceFieldSortOrder).toBe('ascending');
    expect(o.mergeEngine).toBe('deduplicate');
    expect(o.dataFilePathDirectory).toBeNull();
    // The stop trigger and level count follow a configured compaction trigger.
    const t = tableOptions({ options: { 'num-sorted-run.compaction-trigger': '3' }, primaryKeys: ['id'] });
    expect([t.numSortedRunStopTrigger, t.numLevels]).toEqual([6, 4]);
  });

  it('reads bucket and bucket-key (trimmed list; bad counts name the option)', () => {
    expect(tableOptions({ options: { bucket: '4', 'bucket-key': 'v, k' }, primaryKeys: [] }).bucketKey).toEqual(['v', 'k']);
    expect(tableOptions({ options: { bucket: '4' }, primaryKeys: [] }).bucket).toBe(4);
    expect(tableOptions({ options: {}, primaryKeys: [] }).bucket).toBe(-1);
    expect(tableOptions({ options: {}, primaryKeys: [] }).bucketKey).toEqual([]);
    expect(() => tableOptions({ options: { bucket: 'x' }, primaryKeys: [] }).bucket).toThrow(InvalidOptionError);
    expect(() => tableOptions({ options: { bucket: '0' }, primaryKeys: [] }).bucket).toThrow(/'bucket'/);
  });

  it('reads one value one way everywhere: booleans are trimmed, bad values name the option when used', () => {
    const o = tableOptions({
      options: { 'partition.legacy-name': ' false', 'write-only': 'yes', 'first-row.ignore-delete': 'TRUE' },
      primaryKeys: [],
    });
    expect(o.partitionLegacyName).toBe(false);
    expect(o.ignoreDelete).toBe(true);
    expect(() => o.writeOnly).toThrow(InvalidOptionError);
    expect(() => o.writeOnly).toThrow(/'write-only' has invalid value 'yes'/);
    expect(() => tableOptions({ options: { 'num-levels': 'many' }, primaryKeys: [] }).numLevels).toThrow(/'num-levels' = 'many'/);
    expect(() => tableOptions({ options: { 'changelog-producer': 'sometimes' }, primaryKeys: [] }).changelogProducer).toThrow(
      /'changelog-producer' has invalid value 'sometimes'/,
    );
  });

  it('warns once per table and schema about unknown keys, naming the nearest known key, and ignores open prefixes', () => {
    const s = schema({
      'snapshot.num-retaind.min': '3',
      'fields.h.aggregate-function': 'max',
      's3.endpoint': 'x',
      'hive.x': 'y',
      'totally-new': '1',
    });
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m) };
    tableContext(new MemoryFileIO(), 'memory://wh/db.db/warn-a', s, { logger });
    tableContext(new MemoryFileIO(), 'memory://wh/db.db/warn-a', s, { logger });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("unknown table option 'snapshot.num-retaind.min' (did you mean 'snapshot.num-retained.min'?)");
    expect(warnings[0]).toContain('memory://wh/db.db/warn-a (schema 2)');
    expect(warnings[1]).toContain("unknown table option 'totally-new'");
    expect(warnings[1]).not.toContain('did you mean');
    // Another table with the same schema warns again.
    tableContext(new MemoryFileIO(), 'memory://wh/db.db/warn-b', s, { logger });
    expect(warnings).toHaveLength(4);
  });

  it('is created once per schema object', () => {
    const s = schema({});
    expect(coreOptions(s)).toBe(coreOptions(s));
  });
});

describe('FileStorePathFactory', () => {
  const types = [parseTypeString('DATE'), parseTypeString('STRING')];

  it('renders partitions from values or BinaryRows with the partition naming options', () => {
    const legacy = new FileStorePathFactory('s3://b/wh/db.db/t', schema({}));
    const row = serializeBinaryRow(types, [19723, null]);
    expect(legacy.partitionPath(row)).toBe('dt=19723/h=__DEFAULT_PARTITION__/');
    expect(legacy.partitionPath([19723, 'a:b'])).toBe('dt=19723/h=a%3Ab/');
    const named = new FileStorePathFactory(
      's3://b/wh/db.db/t',
      schema({ 'partition.legacy-name': 'false', 'partition.default-name': 'NULL' }),
    );
    expect(named.partitionPath(row)).toBe('dt=2024-01-01/h=NULL/');
    expect(named.partitionSpec(row)).toEqual({ dt: '2024-01-01', h: 'NULL' });
  });

  it('puts data files under data-file.path-directory unless the manifest gives an external path', () => {
    const f = new FileStorePathFactory('s3://b/wh/db.db/t/', schema({ 'data-file.path-directory': 'data' }));
    const row = serializeBinaryRow(types, [1, 'x']);
    expect(f.bucketDir(row, 3)).toBe('s3://b/wh/db.db/t/data/dt=1/h=x/bucket-3');
    expect(f.dataFilePath(row, 3, 'data-u-0.parquet')).toBe('s3://b/wh/db.db/t/data/dt=1/h=x/bucket-3/data-u-0.parquet');
    expect(f.relativeDataFilePath(row, 3, 'data-u-0.parquet')).toBe('data/dt=1/h=x/bucket-3/data-u-0.parquet');
    expect(f.dataFilePath(row, 3, 'data-u-0.parquet', 's3://other/f.parquet')).toBe('s3://other/f.parquet');
    expect(f.manifestListPath('manifest-list-u-0')).toBe('s3://b/wh/db.db/t/manifest/manifest-list-u-0');
    expect(f.indexFilePath('index-u-0')).toBe('s3://b/wh/db.db/t/index/index-u-0');
    expect(f.snapshotPath(4)).toBe('s3://b/wh/db.db/t/snapshot/snapshot-4');
    expect(f.forBranch('dev').snapshotPath(4)).toBe('s3://b/wh/db.db/t/branch/branch-dev/snapshot/snapshot-4');
  });

  it('without a schema serves metadata locations only', () => {
    const m = metadataPaths('memory://wh/db.db/t');
    expect(m.schemaPath(0)).toBe('memory://wh/db.db/t/schema/schema-0');
    expect(() => m.partitionPath([1])).toThrow(/has no schema/);
  });

  it('withSchema gives the context of another schema version of the same table', () => {
    const ctx = tableContext(new MemoryFileIO(), 'memory://wh/db.db/t', schema({}));
    const other = withSchema(ctx, schema({ 'data-file.path-directory': 'd' }));
    expect(other.location).toBe(ctx.location);
    expect(other.paths.bucketDir('', 0)).toBe('memory://wh/db.db/t/d/bucket-0');
    expect(withSchema(ctx, ctx.schema)).toBe(ctx);
  });
});
