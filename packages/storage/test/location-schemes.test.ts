/**
 * Location spellings users bring from other tools: `s3a://` (Hadoop, Flink and Spark configs) is
 * S3, and `s3:bucket/path` (no `//`) is refused rather than taken for a local directory named
 * `s3:bucket`.
 */
import { describe, expect, it } from 'vitest';
import { S3FileIO, StorageConfigError, joinPath, parseLocation, resolveFileIO } from '../src/index.js';

describe('s3a:// is s3://', () => {
  it('parses into the same bucket and key, any case', () => {
    expect(parseLocation('s3a://bucket/a/b')).toEqual({ scheme: 's3', bucket: 'bucket', key: 'a/b' });
    expect(parseLocation('S3A://bucket/k')).toEqual({ scheme: 's3', bucket: 'bucket', key: 'k' });
    expect(() => parseLocation('s3a:///key')).toThrow(/no bucket/);
  });

  it('resolves to the S3 FileIO and joins like s3://', async () => {
    const io = resolveFileIO('s3a://bucket/wh', {
      s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' },
    });
    try {
      expect(io).toBeInstanceOf(S3FileIO);
    } finally {
      await io.close();
    }
    expect(joinPath('s3a://bucket/wh', 'db.db', 't')).toBe('s3a://bucket/wh/db.db/t');
  });
});

describe('a scheme without //', () => {
  for (const uri of ['s3:bucket/path', 'S3:bucket', 's3a:bucket/path', 's3:/bucket/path', 'memory:name/k']) {
    it(`refuses ${uri}, showing the URI meant`, () => {
      expect(() => parseLocation(uri)).toThrow(StorageConfigError);
      expect(() => parseLocation(uri)).toThrow(/is not a valid location: write .*:\/\/.*, or \.\/.* for a local directory of that name/);
      expect(() => resolveFileIO(uri)).toThrow(StorageConfigError);
    });
  }

  it('still takes ordinary relative paths, and ./s3:x as a local directory', () => {
    expect(parseLocation('wh/db.db/t')).toEqual({ scheme: 'file', path: 'wh/db.db/t' });
    expect(parseLocation('./s3:bucket/x')).toEqual({ scheme: 'file', path: './s3:bucket/x' });
  });
});
