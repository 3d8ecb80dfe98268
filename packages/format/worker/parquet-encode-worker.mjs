// Worker thread of @tidemark/format's ParquetEncodePool (src/parquet-encode-pool.ts).
//
// Plain JavaScript so that it loads unchanged from the TypeScript sources (vitest) and from dist.
// It needs only parquet-wasm: the main thread sends Arrow IPC stream bytes plus the writer
// settings prepared by prepareParquetInput, and gets the Parquet bytes back (both transferred).
// The property chain below must stay identical to encodeParquetIpc in src/parquet-writer.ts; the
// pool's tests compare the two outputs byte for byte.
import { parentPort } from 'node:worker_threads';
import * as pw from 'parquet-wasm';

if (!parentPort) throw new Error('parquet-encode-worker.mjs must run as a worker thread');
const port = parentPort;

port.on('message', (job) => {
  let bytes;
  try {
    let builder = new pw.WriterPropertiesBuilder()
      .setCompression(job.settings.codec)
      .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
      .setCreatedBy(job.settings.createdBy);
    if (job.settings.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(job.settings.rowGroupSize);
    // writeParquet consumes (frees) the wasm table.
    bytes = pw.writeParquet(pw.Table.fromIPCStream(job.ipc), builder.build());
  } catch (e) {
    const error = e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
    port.postMessage({ id: job.id, ok: false, error });
    // A wasm trap (Rust panic) may leave the instance in an undefined state: start afresh.
    if (e instanceof WebAssembly.RuntimeError) process.exit(1);
    return;
  }
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const out = whole ? bytes : bytes.slice();
  port.postMessage({ id: job.id, ok: true, bytes: out }, [out.buffer]);
});
