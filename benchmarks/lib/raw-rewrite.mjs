/**
 * The baseline of the compaction benchmarks: read each Parquet file and write it again with
 * parquet-wasm alone (readParquet + writeParquet, zstd), no table logic, in a child task.
 */
import { fileIOFor } from './bench-storage.mjs';

/**
 * Reads `files` (`[{ path }]`) and writes each rewritten to `<target>/raw-<i>.parquet`; returns
 * the bytes read and written, the wall time and the process's CPU time.
 */
export async function rawParquetRewrite({ files, target, s3 }) {
  const pw = await import('parquet-wasm');
  const io = await fileIOFor(target, s3);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let bytesRead = 0;
  let bytesWritten = 0;
  for (const [i, f] of files.entries()) {
    const bytes = await io.read(f.path);
    bytesRead += bytes.length;
    const table = pw.readParquet(bytes);
    const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.ZSTD).build();
    const out = pw.writeParquet(table, props);
    bytesWritten += out.length;
    await io.write(`${target}/raw-${i}.parquet`, out);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  await io.close();
  return { files: files.length, bytesRead, bytesWritten, ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}
