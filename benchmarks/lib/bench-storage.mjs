/**
 * Where a benchmark's tables live: a fresh warehouse per run on local disk and, when the harness
 * passes S3 settings, on the S3 server; how the children reach S3; and cleaning up afterwards.
 */
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
