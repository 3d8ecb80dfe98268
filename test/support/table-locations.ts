/**
 * One table location per test on local disk or on the real S3 server, for suites that run the
 * same check on both, each with its own FileIO, cleaned up or closed afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { FileSystemCatalog, openTable, type Table, type TableSpec } from '@tidemark/core';
import { LocalFileIO, S3FileIO, type S3Options } from '@tidemark/storage';
import { s3Available, s3TestBucket, s3TestOptions, uniquePrefix } from './s3.js';

/** Runs `body` on `<fresh temp dir>/wh/db.db/t` (prefix names the temp dir), removing the dir afterwards. */
export async function onLocalTable<T>(prefix: string, body: (io: LocalFileIO, root: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  try {
    return await body(new LocalFileIO(), join(dir, 'wh', 'db.db', 't'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `body` with a FileIO of its own on the S3 server, at `s3://<bucket>/<unique prefix from
 * label><suffix>`, closing the FileIO afterwards (the objects stay: the prefix is never reused).
 */
export async function onS3Location<T>(
  label: string,
  body: (io: S3FileIO, location: string, options: S3Options) => Promise<T>,
  suffix = '/db.db/t',
): Promise<T> {
  const options = s3TestOptions();
  const io = new S3FileIO(options);
  try {
    return await body(io, `s3://${s3TestBucket()}/${uniquePrefix(label)}${suffix}`, options);
  } finally {
    await io.close();
  }
}

/** {@link onS3Location} at a warehouse root of its own, `s3://<bucket>/<unique prefix from label>`. */
export function onS3Warehouse<T>(label: string, body: (io: S3FileIO, warehouse: string, options: S3Options) => Promise<T>): Promise<T> {
  return onS3Location(label, body, '');
}

/**
 * Runs `body` on table `db.t`, created from `spec` in a warehouse of its own on the S3 server
 * ({@link onS3Warehouse}) and opened on that FileIO.
 */
export function onS3Table<T>(
  label: string,
  spec: TableSpec,
  body: (table: Table, io: S3FileIO, options: S3Options) => Promise<T>,
): Promise<T> {
  return onS3Warehouse(label, async (io, warehouse, options) => {
    const catalog = new FileSystemCatalog(warehouse, { fileIO: io });
    await catalog.createTable('db.t', spec);
    return body(await openTable(catalog.tableLocation('db.t'), { fileIO: io }), io, options);
  });
}

/**
 * Registers the test `title`, which runs `body` in a warehouse of its own on the S3 server
 * ({@link onS3Warehouse}); skipped, with a notice naming `suite`, when no S3 server is configured.
 */
export function itOnS3Warehouse(
  suite: string,
  title: string,
  label: string,
  body: (io: S3FileIO, warehouse: string, options: S3Options) => Promise<void>,
  timeoutMs: number,
): void {
  (s3Available(suite) ? it : it.skip)(title, () => onS3Warehouse(label, body), timeoutMs);
}
