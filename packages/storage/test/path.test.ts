import { describe, expect, it } from 'vitest';
import { joinPath, parseLocation, StorageConfigError } from '../src/index.js';

describe('joinPath', () => {
  it('joins plain absolute and relative paths without double slashes', () => {
    expect(joinPath('/data/wh', 'db.db', 't')).toBe('/data/wh/db.db/t');
    expect(joinPath('/data/wh/', '/db.db/', '/t')).toBe('/data/wh/db.db/t');
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('rel/dir', 'x')).toBe('rel/dir/x');
  });

  it('keeps file:// URIs intact', () => {
    expect(joinPath('file:///data/wh', 'snapshot', 'snapshot-1')).toBe('file:///data/wh/snapshot/snapshot-1');
    expect(joinPath('file:///data/wh/', 'a')).toBe('file:///data/wh/a');
  });

  it('keeps the bucket of s3:// and memory:// locations', () => {
    expect(joinPath('s3://bucket', 'wh', 'db.db')).toBe('s3://bucket/wh/db.db');
    expect(joinPath('s3://bucket/', 'wh')).toBe('s3://bucket/wh');
    expect(joinPath('s3://bucket/prefix/', '/t/', 'snapshot/snapshot-1')).toBe('s3://bucket/prefix/t/snapshot/snapshot-1');
    expect(joinPath('memory://x', 'a/b')).toBe('memory://x/a/b');
    expect(joinPath('memory://x/a//', 'b')).toBe('memory://x/a/b');
  });

  it('ignores empty parts', () => {
    expect(joinPath('s3://b/p', '', 'k')).toBe('s3://b/p/k');
    expect(joinPath('s3://b')).toBe('s3://b');
  });
});

describe('parseLocation', () => {
  it('parses plain paths and file URIs as file', () => {
    expect(parseLocation('/tmp/x')).toEqual({ scheme: 'file', path: '/tmp/x' });
    expect(parseLocation('file:///tmp/x%20y')).toEqual({ scheme: 'file', path: '/tmp/x y' });
  });

  it('parses s3 and memory locations into bucket and key', () => {
    expect(parseLocation('s3://bucket/a/b')).toEqual({ scheme: 's3', bucket: 'bucket', key: 'a/b' });
    expect(parseLocation('s3://bucket')).toEqual({ scheme: 's3', bucket: 'bucket', key: '' });
    expect(parseLocation('S3://bucket/k')).toEqual({ scheme: 's3', bucket: 'bucket', key: 'k' });
    expect(parseLocation('memory://name/k/')).toEqual({ scheme: 'memory', bucket: 'name', key: 'k/' });
  });

  it('rejects unknown schemes and missing buckets', () => {
    expect(() => parseLocation('hdfs://nn/x')).toThrow(StorageConfigError);
    expect(() => parseLocation('hdfs://nn/x')).toThrow(/hdfs/);
    expect(() => parseLocation('s3:///key')).toThrow(/bucket/);
    expect(() => parseLocation('')).toThrow(StorageConfigError);
  });
});

describe('file:// round trip', () => {
  it('escapes % # ? in appended parts so parseLocation returns the literal name', () => {
    const loc = joinPath('file:///wh/t', 'dt=2024-01-01 10%3A00', 'a#b?c');
    expect(loc).toBe('file:///wh/t/dt=2024-01-01 10%253A00/a%23b%3Fc');
    expect(parseLocation(loc).path).toBe('/wh/t/dt=2024-01-01 10%3A00/a#b?c');
    expect(joinPath('/wh/t', 'x%3Ay')).toBe('/wh/t/x%3Ay');
    expect(joinPath('s3://b/t', 'x%3Ay')).toBe('s3://b/t/x%3Ay');
  });
});
