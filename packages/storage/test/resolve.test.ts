import { describe, expect, it } from 'vitest';
import { LocalFileIO, MemoryFileIO, resolveFileIO, S3FileIO, s3ClientPoolSize, StorageConfigError } from '../src/index.js';

describe('resolveFileIO', () => {
  it('picks the backend from the location scheme', async () => {
    expect(resolveFileIO('/tmp/wh')).toBeInstanceOf(LocalFileIO);
    expect(resolveFileIO('file:///tmp/wh')).toBeInstanceOf(LocalFileIO);
    expect(resolveFileIO('memory://x/wh')).toBeInstanceOf(MemoryFileIO);
    const s3 = resolveFileIO('s3://bucket/wh', { s3: { endpoint: 'http://127.0.0.1:1', accessKeyId: 'a', secretAccessKey: 'b' } });
    expect(s3).toBeInstanceOf(S3FileIO);
    expect(s3.kind).toBe('s3');
    await s3.close();
  });

  it('reuses one S3 client per distinct configuration', async () => {
    const before = s3ClientPoolSize();
    const opts = { s3: { endpoint: 'http://127.0.0.1:2', accessKeyId: 'a', secretAccessKey: 'b' } };
    const a = resolveFileIO('s3://b1/x', opts);
    const b = resolveFileIO('s3://b2/y', opts);
    expect(s3ClientPoolSize()).toBe(before + 1);
    const c = resolveFileIO('s3://b1/x', { s3: { ...opts.s3, secretAccessKey: 'other' } });
    expect(s3ClientPoolSize()).toBe(before + 2);
    await Promise.all([a.close(), b.close(), c.close()]);
    expect(s3ClientPoolSize()).toBe(before);
  });

  it('rejects unsupported schemes', () => {
    expect(() => resolveFileIO('hdfs://nn/wh')).toThrow(StorageConfigError);
  });
});
