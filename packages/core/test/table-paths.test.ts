import { describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { TablePaths } from '../src/table-paths.js';
import { SchemaManager } from '../src/schema-manager.js';
import { SchemaNotFoundError, TableNotFoundError } from '../src/errors.js';
import { memoryRoot } from './helpers.js';

describe('TablePaths', () => {
  it('derives every location from the root', () => {
    const p = new TablePaths('s3://bucket/wh/db.db/t/');
    expect(p.schemaPath(3)).toBe('s3://bucket/wh/db.db/t/schema/schema-3');
    expect(p.snapshotPath(12)).toBe('s3://bucket/wh/db.db/t/snapshot/snapshot-12');
    expect(p.latestHint).toBe('s3://bucket/wh/db.db/t/snapshot/LATEST');
    expect(p.earliestHint).toBe('s3://bucket/wh/db.db/t/snapshot/EARLIEST');
    expect(p.manifestPath('manifest-list-x-0')).toBe('s3://bucket/wh/db.db/t/manifest/manifest-list-x-0');
    expect(p.indexPath('index-x-0')).toBe('s3://bucket/wh/db.db/t/index/index-x-0');
    expect(p.tagPath('v1')).toBe('s3://bucket/wh/db.db/t/tag/tag-v1');
    expect(p.bucketDir('f1=10/', 1)).toBe('s3://bucket/wh/db.db/t/f1=10/bucket-1');
    expect(p.bucketDir('', 0)).toBe('s3://bucket/wh/db.db/t/bucket-0');
    expect(p.dataFilePath('a=1/b=2', 0, 'data-u-0.parquet')).toBe('s3://bucket/wh/db.db/t/a=1/b=2/bucket-0/data-u-0.parquet');
    expect(p.dataFilePath('a=1', 0, 'data-u-0.parquet', 's3://other/x/data-u-0.parquet')).toBe('s3://other/x/data-u-0.parquet');
  });

  it('puts branch metadata under branch/branch-<name> and honours data-file.path-directory', () => {
    const p = new TablePaths('/wh/db.db/t', { branch: 'dev', dataFilePathDirectory: 'data' });
    expect(p.snapshotPath(1)).toBe('/wh/db.db/t/branch/branch-dev/snapshot/snapshot-1');
    expect(p.schemaPath(0)).toBe('/wh/db.db/t/branch/branch-dev/schema/schema-0');
    expect(p.manifestPath('m')).toBe('/wh/db.db/t/manifest/m');
    expect(p.bucketDir('k=v', 0)).toBe('/wh/db.db/t/data/k=v/bucket-0');
  });
});

describe('SchemaManager', () => {
  it('reports a location without schema files as not a table', async () => {
    const sm = new SchemaManager(new MemoryFileIO(), new TablePaths(memoryRoot()));
    expect(await sm.latestId()).toBeNull();
    const err = await sm.latest().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TableNotFoundError);
    expect((err as TableNotFoundError).userError).toBe(true);
  });

  it('names the missing schema file', async () => {
    const paths = new TablePaths(memoryRoot());
    const sm = new SchemaManager(new MemoryFileIO(), paths);
    await expect(sm.schema(4)).rejects.toThrow(new SchemaNotFoundError(4, paths.schemaPath(4)).message);
    await expect(sm.schema(4)).rejects.toThrow(paths.schemaPath(4));
  });
});
