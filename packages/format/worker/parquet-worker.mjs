// Worker thread of @tidemark/format's ParquetWorkerPool (src/parquet-worker-pool.ts).
//
// Plain JavaScript so that it loads unchanged from the TypeScript sources (vitest) and from dist.
// It needs only parquet-wasm (instantiated from the module the pool compiled, when it sends one).
// Two kinds of job:
// - encode (no `kind`): Arrow IPC stream bytes plus the writer settings prepared by
//   prepareParquetInput in; Parquet bytes out (both transferred). The property chain below must
//   stay identical to encodeParquetIpc in src/parquet-writer.ts; the pool's tests compare the two
//   outputs byte for byte.
// - encode-parts (`kind: 'encode-parts'`): as encode, but the IPC arrives as several streams of one
//   schema (decoded row groups passed through unchanged), joined here first.
// - decode (`kind: 'decode'`): the file's size and the byte ranges the main thread already read
//   (its tail, the projected column chunks or pages) in; an Arrow IPC stream of the requested row
//   groups and columns (and rows: `offset`/`limit`) out. A range parquet-wasm asks for that was not sent is requested from the main
//   thread (which owns the FileIO) with a `read` message.
// A successful reply carries `ran: [start, end]`, when the job ran on this thread (epoch ms), which
// the benchmarks' pool timelines read; the pool ignores it.
import { parentPort, workerData } from 'node:worker_threads';

if (!parentPort) throw new Error('parquet-worker.mjs must run as a worker thread');
const port = parentPort;
const pw = await loadParquetWasm(workerData?.wasmModule);

/**
 * parquet-wasm instantiated from the pool's compiled module (its web build's glue accepts one), so
 * that this thread runs the machine code the other workers already compiled and optimised; the
 * Node build compiles a module of its own.
 */
async function loadParquetWasm(module) {
  if (!(module instanceof WebAssembly.Module)) return import('parquet-wasm');
  const glue = await import('parquet-wasm/esm');
  glue.initSync({ module });
  return glue;
}

/** Replies to this worker's `read` requests, by request id. */
const pendingReads = new Map();
let nextRead = 0;

function describe(e) {
  return e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
}

/** A Blob-like view of (a slice of) the file being decoded, as parquet-wasm's `fromFile` uses it. */
class JobBlob {
  constructor(job, start, size) {
    this.job = job;
    this.start = start;
    this.size = size;
    this.type = '';
  }

  slice(start = 0, end = this.size) {
    const clamp = (o) => Math.min(Math.max(o < 0 ? this.size + o : o, 0), this.size);
    const from = clamp(start);
    const to = clamp(end);
    return new JobBlob(this.job, this.start + from, Math.max(0, to - from));
  }

  async arrayBuffer() {
    const from = this.start;
    const to = this.start + this.size;
    if (this.size === 0) return new ArrayBuffer(0);
    for (const r of this.job.ranges) {
      if (from >= r.start && to <= r.start + r.bytes.length) {
        return r.bytes.slice(from - r.start, to - r.start).buffer;
      }
    }
    const req = nextRead++;
    const bytes = await new Promise((resolve, reject) => {
      pendingReads.set(req, { resolve, reject });
      port.postMessage({ kind: 'read', id: this.job.id, req, start: from, length: this.size });
    });
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
  }
}

/** Wall-clock time (epoch ms) comparable across threads: replies carry when their job ran, for timelines. */
const now = () => performance.timeOrigin + performance.now();

async function decode(job) {
  const t0 = now();
  let file;
  try {
    file = await pw.ParquetFile.fromFile(new JobBlob(job, 0, job.size));
    const table = await file.read({
      rowGroups: job.rowGroups,
      ...(job.batchSize !== undefined ? { batchSize: job.batchSize } : {}),
      ...(job.columns !== undefined ? { columns: job.columns } : {}),
      ...(job.offset !== undefined ? { offset: job.offset } : {}),
      ...(job.limit !== undefined ? { limit: job.limit } : {}),
    });
    const ipc = table.intoIPCStream();
    const out = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength ? ipc : ipc.slice();
    port.postMessage({ id: job.id, ok: true, bytes: out, ran: [t0, now()] }, [out.buffer]);
  } catch (e) {
    port.postMessage({ id: job.id, ok: false, error: describe(e) });
    if (e instanceof WebAssembly.RuntimeError) process.exit(1);
  } finally {
    try {
      file?.free();
    } catch {
      // still borrowed by a future that failed: leaked with this job, never reused
    }
  }
}

/**
 * The IPC streams of an `encode-parts` job joined into one, as joinIpcStreams in src/ipc-stream.ts
 * does: the first stream's schema message, every stream's record batches, an end-of-stream marker.
 */
function joinParts(parts) {
  let length = parts[0].schemaEnd + 8;
  for (const p of parts) length += p.batchesEnd - p.schemaEnd;
  const out = new Uint8Array(length);
  out.set(parts[0].bytes.subarray(0, parts[0].schemaEnd), 0);
  let at = parts[0].schemaEnd;
  for (const p of parts) {
    out.set(p.bytes.subarray(p.schemaEnd, p.batchesEnd), at);
    at += p.batchesEnd - p.schemaEnd;
  }
  new DataView(out.buffer).setUint32(at, 0xffffffff, true);
  return out;
}

function encode(job) {
  const t0 = now();
  let bytes;
  try {
    const ipc = job.parts !== undefined ? joinParts(job.parts) : job.ipc;
    let builder = new pw.WriterPropertiesBuilder()
      .setCompression(job.settings.codec)
      .setStatisticsEnabled(pw.EnabledStatistics.Page)
      .setCreatedBy(job.settings.createdBy);
    if (job.settings.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(job.settings.rowGroupSize);
    // No dictionary for columns unique in the file (ParquetWriteOptions.plainColumns).
    for (const column of job.settings.plainColumns ?? []) builder = builder.setColumnDictionaryEnabled(column, false);
    // writeParquet consumes (frees) the wasm table.
    bytes = pw.writeParquet(pw.Table.fromIPCStream(ipc), builder.build());
  } catch (e) {
    port.postMessage({ id: job.id, ok: false, error: describe(e) });
    // A wasm trap (Rust panic) may leave the instance in an undefined state: start afresh.
    if (e instanceof WebAssembly.RuntimeError) process.exit(1);
    return;
  }
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const out = whole ? bytes : bytes.slice();
  port.postMessage({ id: job.id, ok: true, bytes: out, ran: [t0, now()] }, [out.buffer]);
}

port.on('message', (msg) => {
  if (msg.kind === 'read-reply') {
    const pending = pendingReads.get(msg.req);
    if (!pending) return;
    pendingReads.delete(msg.req);
    if (msg.bytes) pending.resolve(msg.bytes);
    else pending.reject(Object.assign(new Error(msg.error?.message ?? 'read failed'), { name: msg.error?.name ?? 'Error' }));
  } else if (msg.kind === 'decode') {
    // A trap inside parquet-wasm's futures escapes as an uncaught exception and ends this thread;
    // the pool then rejects the job as a crash on this file.
    void decode(msg);
  } else {
    encode(msg);
  }
});
