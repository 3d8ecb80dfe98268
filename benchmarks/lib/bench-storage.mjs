/**
 * Where a benchmark's tables live: a fresh warehouse per run on local disk and, when the harness
 * passes S3 settings, on the S3 server; how the children reach S3; and cleaning up afterwards.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { WORK_DIR } from './report.mjs';

/** S3FileIO options for the harness's S3 settings (`{ endpoint, region, accessKeyId, secretAccessKey }`): path-style, as RGW wants. */
export function s3FileIOOptions(s3) {
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  };
}

/** `resolveFileIO` options for a warehouse: the S3 client settings when `s3` is given, none for local disk. */
export function storageOptions(s3) {
  return s3 ? { s3: s3FileIOOptions(s3) } : {};
}

/**
 * The warehouses of one run of benchmark `name`: `benchmarks/work/<name>-<pid>` on local disk, and
 * `s3://<bucket>/bench/<name>-<time>` when `s3` settings are given. Each is `{ backend, root, s3 }`.
 */
export function benchWarehouses(name, s3) {
  const out = [{ backend: 'local', root: path.join(WORK_DIR, `${name}-${process.pid}`), s3: undefined }];
  if (s3) out.push({ backend: 's3 (RGW)', root: `s3://${s3.bucket}/bench/${name}-${Date.now().toString(36)}`, s3 });
  return out;
}

/**
 * {@link benchWarehouses} with per-backend settings: `perBackend(b)` adds fields to each (e.g. the
 * row count, smaller on S3).
 */
export function benchBackends(name, s3, perBackend = () => ({})) {
  return benchWarehouses(name, s3).map((b) => ({ ...b, ...perBackend(b) }));
}

/** A fresh location under a warehouse `{ root, s3 }` (a random name), for one table of a series. */
export function uniqueRoot(b) {
  return b.s3 ? `${b.root}/${randomUUID()}` : path.join(b.root, randomUUID());
}

/**
 * Runs `fn(io)` with a FileIO for `root` (the BUILT storage package: S3 with `s3` settings, else
 * local disk), then deletes everything under `root` and closes the FileIO, whatever `fn` did.
 */
export async function withFileIO(root, s3, fn) {
  const io = await fileIOFor(root, s3);
  try {
    return await fn(io);
  } finally {
    await removeWarehouse(io, root).catch(() => undefined);
    await io.close?.();
  }
}

/**
 * Runs `fn(io)` with the FileIO `resolveFileIO` gives for a warehouse `{ root, s3 }`, then deletes
 * the warehouse and closes the FileIO.
 */
export async function withWarehouseIO(b, fn) {
  const storage = await import('@tidemark/storage');
  const io = storage.resolveFileIO(b.root, storageOptions(b.s3));
  try {
    return await fn(io);
  } finally {
    await removeWarehouse(io, b.root);
    await io.close?.();
  }
}

/** Deletes everything under `root` through `io` (an S3 prefix object by object, a local directory at once). */
export async function removeWarehouse(io, root) {
  if (root.startsWith('s3://')) {
    const paths = async function* () {
      for await (const st of io.list(root, { recursive: true })) yield st.path;
    };
    await io.deleteMany(paths());
  } else await rm(root, { recursive: true, force: true });
}

/** Total bytes of the Parquet files under `root` (live or not). */
export async function parquetBytes(io, root) {
  let bytes = 0;
  for await (const st of io.list(root, { recursive: true })) if (st.path.endsWith('.parquet')) bytes += st.size;
  return bytes;
}

/** A FileIO for `location` from the BUILT storage package: S3 for `s3://…` (with the harness's `s3` settings), else local disk. */
export async function fileIOFor(location, s3) {
  const storage = await import('@tidemark/storage');
  return location.startsWith('s3://') ? new storage.S3FileIO(s3FileIOOptions(s3)) : new storage.LocalFileIO();
}
