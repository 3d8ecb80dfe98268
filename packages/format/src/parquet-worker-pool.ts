/**
 * Parquet encoding and decoding on worker threads.
 *
 * parquet-wasm is single-threaded and blocks its thread for seconds per large file, so a writer
 * or reader that runs it on the main thread uses one core and freezes the event loop meanwhile.
 * The pool keeps the JS halves on the calling thread (Arrow → IPC stream before encoding, ranged
 * reads through the `FileIO` and IPC → Arrow after decoding) and runs the wasm halves in workers.
 * Bytes cross as transferred ArrayBuffers in both directions, so nothing is copied twice.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

import type * as arrow from 'apache-arrow';

import { FormatError } from './errors.js';
import { joinIpcStreams, type IpcStreamSegment } from './ipc-stream.js';
import { encodeColumnSplit, planColumnSplit } from './parquet-column-split.js';
import { concatParquetFiles } from './parquet-concat.js';
import { encodeParquetIpc, prepareParquetInput, type ParquetEncodeSettings, type ParquetWriteOptions } from './parquet-writer.js';

/** A Parquet encode worker failed: it crashed, exited, or parquet-wasm rejected the job. */
export class ParquetEncodeError extends FormatError {}

/** Settings of a {@link ParquetWorkerPool}: worker count and script. */
export interface ParquetWorkerPoolOptions {
  /**
   * Number of worker threads; 0 runs parquet-wasm on the calling thread. Default: the
   * `TIDEMARK_PARQUET_WORKERS` environment variable, else min(2, available parallelism).
   */
  readonly size?: number;
  /** Worker script; defaults to the package's `worker/parquet-worker.mjs`. */
  readonly workerUrl?: URL;
}

/**
 * A decode job: which row groups and columns of a file, plus the byte ranges of the file the
 * caller already holds. Ranges parquet-wasm needs beyond these are fetched through `readRange`.
 * @internal
 */
export interface ParquetDecodeJob {
  /** Names the file in errors. */
  readonly path: string;
  readonly size: number;
  /** Byte ranges of the file (their buffers are transferred to the worker, i.e. detached here). */
  readonly ranges: readonly { readonly start: number; readonly bytes: Uint8Array }[];
  readonly rowGroups: readonly number[];
  readonly columns?: readonly string[];
  readonly batchSize?: number;
  /** Rows skipped from the start of the row groups (parquet-wasm's `offset`). */
  readonly offset?: number;
  /** Rows decoded at most (parquet-wasm's `limit`). */
  readonly limit?: number;
  readRange(start: number, length: number): Promise<Uint8Array>;
}

interface Job {
  readonly id: number;
  readonly message: Record<string, unknown>;
  readonly transfer: ArrayBuffer[];
  readonly resolve: (bytes: Uint8Array) => void;
  readonly reject: (e: Error) => void;
  /** The error for a failure reported by the worker (`detail` is parquet-wasm's message). */
  readonly failed: (detail: string) => Error;
  /** The error for a worker that crashed or exited while running this job. */
  readonly crashed: (why: string, cause?: unknown) => Error;
  readonly readRange?: (start: number, length: number) => Promise<Uint8Array>;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
}

interface Reply {
  readonly id: number;
  readonly kind?: 'read';
  readonly ok?: boolean;
  readonly bytes?: Uint8Array;
  readonly error?: { readonly name: string; readonly message: string };
  readonly req?: number;
  readonly start?: number;
  readonly length?: number;
}

// src/ and dist/ are siblings, so this resolves to the same file from the sources and the build.
const DEFAULT_WORKER_URL = new URL('../worker/parquet-worker.mjs', import.meta.url);

/**
 * Size the environment asks for: `TIDEMARK_PARQUET_WORKERS` (0 = run parquet-wasm on the calling
 * thread), else min(2, available parallelism). One worker already overlaps the wasm work with the
 * caller's.
 */
export function defaultParquetWorkerCount(): number {
  const env = process.env['TIDEMARK_PARQUET_WORKERS'];
  if (env !== undefined && env.trim() !== '') {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 0) {
      throw new FormatError(`TIDEMARK_PARQUET_WORKERS must be a non-negative integer, got '${env}'`);
    }
    return n;
  }
  return Math.min(2, availableParallelism());
}

/**
 * Whether `bytes` covers its whole ArrayBuffer, i.e. can be transferred without a copy. Copies are
 * made with `new Uint8Array(bytes)`: `Buffer#slice` returns a view (of Node's shared pool, even).
 */
function whole(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
}

/**
 * A small pool of worker threads running parquet-wasm, for both encoding and decoding. Workers
 * start lazily on the first job (each instantiates its own wasm, ~75–100 ms), stay warm, and are
 * unref'd while idle so they never keep the process alive. Jobs queue without bound here; callers
 * bound what they put in flight (the table reader keeps a read-ahead window). A worker that
 * crashes rejects its job with a typed error and is replaced by the next job.
 */
export class ParquetWorkerPool {
  /** Number of worker threads (0 = parquet-wasm runs on the calling thread). */
  readonly size: number;
  private readonly workerUrl: URL;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(options: ParquetWorkerPoolOptions = {}) {
    const size = options.size ?? defaultParquetWorkerCount();
    if (!Number.isInteger(size) || size < 0) {
      throw new FormatError(`ParquetWorkerPool size must be a non-negative integer, got ${size}`);
    }
    this.size = size;
    this.workerUrl = options.workerUrl ?? DEFAULT_WORKER_URL;
  }

  /** Jobs queued or running right now. */
  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.job !== undefined).length;
  }

  /**
   * Same output and options as {@link writeParquetFile}. The Arrow → IPC step runs before this
   * returns; the wasm encoding runs on a worker (or, with size 0, on this thread).
   */
  async encode(input: arrow.Table | readonly arrow.RecordBatch[], options: ParquetWriteOptions = {}): Promise<Uint8Array> {
    const { ipc, settings } = prepareParquetInput(input, options);
    return this.encodeIpc(ipc, settings);
  }

  /**
   * Encodes a prepared IPC stream. The bytes' ArrayBuffer is transferred to the worker (detached
   * here) when the view covers all of it; otherwise they are copied first.
   * @internal
   */
  encodeIpc(ipc: Uint8Array, settings: ParquetEncodeSettings): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new ParquetEncodeError('the Parquet encode pool is closed'));
    if (this.size === 0) {
      try {
        return Promise.resolve(encodeParquetIpc(ipc, settings));
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new ParquetEncodeError(String(e)));
      }
    }
    const own = whole(ipc) ? ipc : new Uint8Array(ipc);
    return this.submit({ ipc: own, settings }, [own.buffer as ArrayBuffer], {
      failed: (detail) => new ParquetEncodeError(`parquet-wasm failed to encode the file: ${detail}`),
      crashed: (why, cause) => new ParquetEncodeError(`Parquet encode worker ${why}; the file was not written`, { cause }),
    });
  }

  /**
   * Encodes the record batches of several IPC streams of one schema as one Parquet file: the
   * worker joins the streams (`joinIpcStreams`) and encodes the result, so the rows never become
   * Arrow on this thread. The streams' buffers are transferred (detached here) when whole.
   * @internal
   */
  encodeIpcSegments(segments: readonly IpcStreamSegment[], settings: ParquetEncodeSettings): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new ParquetEncodeError('the Parquet encode pool is closed'));
    if (this.size === 0) {
      try {
        return Promise.resolve(encodeParquetIpc(joinIpcStreams(segments), settings));
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new ParquetEncodeError(String(e)));
      }
    }
    const parts = segments.map((s) => {
      const bytes = whole(s.bytes) ? s.bytes : new Uint8Array(s.bytes);
      return { bytes, schemaEnd: s.schemaEnd, batchesEnd: s.batchesEnd };
    });
    return this.submit({ kind: 'encode-parts', parts, settings }, [...new Set(parts.map((p) => p.bytes.buffer as ArrayBuffer))], {
      failed: (detail) => new ParquetEncodeError(`parquet-wasm failed to encode the file: ${detail}`),
      crashed: (why, cause) => new ParquetEncodeError(`Parquet encode worker ${why}; the file was not written`, { cause }),
    });
  }

  /**
   * Decodes row groups of a Parquet file on a worker into an Arrow IPC stream. Needs workers
   * (size ≥ 1); `readParquetFile` decodes on the calling thread for a pool of size 0.
   * `failed` turns parquet-wasm's message into the caller's error; a worker crash becomes
   * `failed('the Parquet decoder crashed on this file: …')`.
   * @internal
   */
  decodeIpc(job: ParquetDecodeJob, failed: (detail: string, cause?: unknown) => Error): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new FormatError(`${job.path}: the Parquet worker pool is closed`));
    if (this.size === 0) return Promise.reject(new FormatError('decodeIpc needs a pool with workers'));
    const ranges = job.ranges.map((r) => ({ start: r.start, bytes: whole(r.bytes) ? r.bytes : new Uint8Array(r.bytes) }));
    const message = {
      kind: 'decode',
      size: job.size,
      ranges,
      rowGroups: [...job.rowGroups],
      ...(job.columns ? { columns: [...job.columns] } : {}),
      ...(job.batchSize !== undefined ? { batchSize: job.batchSize } : {}),
      ...(job.offset !== undefined ? { offset: job.offset } : {}),
      ...(job.limit !== undefined ? { limit: job.limit } : {}),
    };
    return this.submit(
      message,
      // Two ranges may be views of one buffer (e.g. the tail and a chunk of one small read): a
      // transfer list must name each buffer once, and the message may refer to it twice.
      [...new Set(ranges.map((r) => r.bytes.buffer as ArrayBuffer))],
      {
        failed: (detail) => failed(detail),
        crashed: (why, cause) => failed(`the Parquet decoder crashed on this file (worker ${why})`, cause),
      },
      (start, length) => job.readRange(start, length),
    );
  }

  /**
   * Starts workers ahead of the first job (up to `count`, at most {@link size}) so their wasm
   * instantiation overlaps the caller's work. Idle workers never keep the process alive.
   */
  warm(count = 1): void {
    if (this.closed) return;
    while (this.slots.length < Math.min(count, this.size)) this.spawn();
  }

  /** Terminates the workers; pending and queued jobs are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new ParquetEncodeError('the Parquet worker pool was closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.job?.reject(new ParquetEncodeError('the Parquet worker pool was closed while a job ran'));
      slot.job = undefined;
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private submit(
    message: Record<string, unknown>,
    transfer: ArrayBuffer[],
    errors: Pick<Job, 'failed' | 'crashed'>,
    readRange?: (start: number, length: number) => Promise<Uint8Array>,
  ): Promise<Uint8Array> {
    return new Promise<Uint8Array>((resolve, reject) => {
      const id = this.nextId++;
      this.queue.push({ id, message: { ...message, id }, transfer, resolve, reject, ...errors, ...(readRange ? { readRange } : {}) });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === undefined);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      slot.job = job;
      // Keep the process alive while a job is in flight: the caller awaits its result.
      slot.worker.ref();
      slot.worker.postMessage(job.message, job.transfer);
    }
  }

  /** Serves a worker's request for file bytes it was not sent. */
  private serveRead(slot: Slot, reply: Reply): void {
    const job = slot.job;
    if (!job || job.id !== reply.id || !job.readRange) return;
    job.readRange(reply.start!, reply.length!).then(
      (bytes) => {
        const own = whole(bytes) ? bytes : new Uint8Array(bytes);
        if (slot.job === job) slot.worker.postMessage({ kind: 'read-reply', req: reply.req, bytes: own }, [own.buffer as ArrayBuffer]);
      },
      (e: unknown) => {
        const error = e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
        if (slot.job === job) slot.worker.postMessage({ kind: 'read-reply', req: reply.req, error });
        // The worker's decode fails with a generic message; the job keeps the real cause.
        if (slot.job === job) job.reject(e instanceof Error ? e : new FormatError(String(e)));
      },
    );
  }

  private spawn(): Slot {
    // Node hands the parent's execArgv to workers; `--input-type` (e.g. from `node -e`) makes a
    // worker fail to start, and the worker needs no other flag of the parent's.
    const worker = new Worker(this.workerUrl, {
      execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')),
      workerData: { wasmModule: sharedWasmModule() },
    });
    const slot: Slot = { worker, job: undefined };
    worker.on('message', (reply: Reply) => {
      if (reply.kind === 'read') {
        this.serveRead(slot, reply);
        return;
      }
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = undefined;
      worker.unref();
      if (reply.ok && reply.bytes) job.resolve(reply.bytes);
      else {
        const err = reply.error ?? { name: 'Error', message: 'no result' };
        job.reject(job.failed(`${err.name}: ${err.message}`));
      }
      this.dispatch();
    });
    const fail = (why: string, cause?: unknown): void => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      const job = slot.job;
      slot.job = undefined;
      job?.reject(job.crashed(why, cause));
      // The next queued job (if any) gets a fresh worker.
      if (!this.closed) this.dispatch();
    };
    worker.on('error', (e: Error) => {
      fail(`crashed (${e.message})`, e);
    });
    worker.on('exit', (code) => {
      fail(`exited unexpectedly with code ${code}`);
    });
    // Only after the listeners: adding a 'message' listener refs the worker's port again, and a
    // port ref'd that way keeps an idle pool (and a process that failed) alive forever.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }
}

let shared: ParquetWorkerPool | undefined;

/** A compiled `WebAssembly.Module` (this package builds without the DOM typings that declare it). */
type WasmModule = object;
const { Module: WasmModuleCtor } = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WasmModule } })
  .WebAssembly;
let wasmModule: WasmModule | null | undefined;

/**
 * parquet-wasm's module, compiled once per process and handed to every worker. Threads that
 * instantiate one module share its machine code: V8 compiles wasm functions lazily and optimises
 * the hot ones later, and a worker with a module of its own pays all of that again (about 7 % of
 * the CPU time of a first 1M-row write, measured). Null when the file cannot be compiled here;
 * the workers then load parquet-wasm on their own.
 */
function sharedWasmModule(): WasmModule | null {
  if (wasmModule === undefined) {
    try {
      wasmModule = new WasmModuleCtor(readFileSync(createRequire(import.meta.url).resolve('parquet-wasm/esm/parquet_wasm_bg.wasm')));
    } catch {
      wasmModule = null;
    }
  }
  return wasmModule;
}

/** The process-wide pool used by {@link encodeParquetAsync} and the table readers (created on first use). */
export function sharedParquetWorkerPool(): ParquetWorkerPool {
  shared ??= new ParquetWorkerPool();
  return shared;
}

/** Options of {@link encodeParquetAsync}: the write options plus the pool to use. */
export interface EncodeParquetAsyncOptions extends ParquetWriteOptions {
  /**
   * Pool to encode on; `false` encodes on the calling thread. Default: the shared pool, sized by
   * `TIDEMARK_PARQUET_WORKERS` (0 disables the workers) or min(2, available parallelism).
   */
  readonly pool?: ParquetWorkerPool | false;
}

/**
 * {@link writeParquetFile} with the parquet-wasm encoding on a worker thread, so the event loop
 * stays responsive and the caller can build the next file meanwhile. Same options, same bytes.
 */
export async function encodeParquetAsync(
  input: arrow.Table | readonly arrow.RecordBatch[],
  options: EncodeParquetAsyncOptions = {},
): Promise<Uint8Array> {
  const { pool, ...writeOptions } = options;
  const { ipc, settings } = prepareParquetInput(input, writeOptions);
  if (pool === false) return encodeParquetIpc(ipc, settings);
  return (pool ?? sharedParquetWorkerPool()).encodeIpc(ipc, settings);
}

/** Default maximum rows per row group of {@link encodeParquetRowGroupsAsync} (parquet-rs's default). */
export const DEFAULT_ROW_GROUP_ROWS = 1_048_576;

/**
 * A file is cut into one row group per worker only down to this many rows per group: every group
 * starts its dictionaries afresh (a unique column pays for a dictionary page per group before it
 * falls back to plain pages), so small groups cost file size for little parallel gain.
 */
const MIN_PARALLEL_GROUP_ROWS = 131_072;

/**
 * Rows per row group of a file of `rows` rows encoded on `workers` workers, as
 * {@link encodeParquetRowGroupsAsync} cuts it: one group per worker while groups keep about 131,072
 * rows or more, never more than `rowGroupRows`. Groups cut for the workers have equal sizes, so no
 * worker waits for another's bigger group, here and in every parallel read of the file (200,000
 * rows: 2 × 100,000 rather than 131,072 + 68,928, whose larger group alone takes two thirds of the
 * time). Writers that stream a file's groups to the pool before its last row is known (a compaction
 * knowing its row count, say) use it to cut the same groups.
 */
export function parallelRowGroupRows(rows: number, workers: number, rowGroupRows = DEFAULT_ROW_GROUP_ROWS): number {
  if (workers <= 0) return rowGroupRows;
  const groupRows = Math.min(rowGroupRows, Math.max(MIN_PARALLEL_GROUP_ROWS, Math.ceil(rows / workers)));
  if (groupRows >= rowGroupRows || rows <= groupRows) return groupRows;
  return Math.ceil(rows / Math.ceil(rows / groupRows));
}

/** Options of {@link encodeParquetRowGroupsAsync}. */
export interface EncodeRowGroupsOptions extends EncodeParquetAsyncOptions {
  /** Maximum rows per row group; default {@link DEFAULT_ROW_GROUP_ROWS}. */
  readonly rowGroupRows?: number;
}

/**
 * Encodes one Parquet file on all the pool's workers at once. With two or more workers and columns,
 * the input is cut into row groups of `rowGroupRows` rows; the groups of each full round (one per
 * worker) are encoded whole on the workers, and every later group (e.g. the only one of a file of
 * up to `rowGroupRows` rows) has its columns split between the workers and stitched into one row
 * group ({@link encodeColumnSplit}), so no worker idles and no group is cut just to use a core.
 * Otherwise (one column, one worker) the input is cut into at least one group per worker as long
 * as groups keep about 131,072 rows or more (equal sizes). Each group becomes a one-group Parquet
 * file on the pool, and the parts are joined by rewriting the footer only ({@link concatParquetFiles}).
 * The result is one valid file with per-group column statistics, as `writeParquetFile` with
 * `rowGroupSize` would write it (not byte-identical: chunks are laid out per part).
 * A file of one small group, or a pool without workers, takes the plain {@link encodeParquetAsync} path.
 */
export async function encodeParquetRowGroupsAsync(
  input: arrow.Table | readonly arrow.RecordBatch[],
  options: EncodeRowGroupsOptions = {},
): Promise<Uint8Array> {
  const { rowGroupRows = DEFAULT_ROW_GROUP_ROWS, ...rest } = options;
  if (!Number.isInteger(rowGroupRows) || rowGroupRows <= 0) {
    throw new FormatError(`rowGroupRows must be a positive integer, got ${rowGroupRows}`);
  }
  const batches = Array.isArray(input) ? (input as readonly arrow.RecordBatch[]) : (input as arrow.Table).batches;
  const rows = batches.reduce((n, b) => n + b.numRows, 0);
  const pool = rest.pool === false ? null : (rest.pool ?? sharedParquetWorkerPool());
  if (pool !== null && planColumnSplit(batches, pool.size) !== null) {
    // Groups of the configured size; a group that would leave a worker idle (the tail after the
    // last round of one group per worker) has its columns encoded on all of them instead.
    const groups = rows <= rowGroupRows ? [batches] : sliceRows(batches, rowGroupRows);
    const busy = Math.floor(groups.length / pool.size) * pool.size;
    const parts = groups.map((group, i) => {
      const part =
        (i >= busy ? encodeColumnSplit(pool, group, rest) : null) ??
        encodeParquetAsync(group, { ...rest, pool, rowGroupSize: rowGroupRows });
      part.catch(() => undefined); // awaited below, in order
      return part;
    });
    return parts.length === 1 ? parts[0]! : concatParquetFiles(await Promise.all(parts));
  }
  const groupRows = parallelRowGroupRows(rows, pool?.size ?? 0, rowGroupRows);
  if (rows <= groupRows || pool === null || pool.size === 0) {
    return encodeParquetAsync(input, { ...rest, rowGroupSize: rowGroupRows });
  }
  const groups = sliceRows(batches, groupRows);
  // Each group's Arrow → IPC runs here while the workers already encode the previous groups.
  const parts: Promise<Uint8Array>[] = [];
  for (const group of groups) {
    const { ipc, settings } = prepareParquetInput(group, { ...rest, rowGroupSize: groupRows });
    const part = pool.encodeIpc(ipc, settings);
    part.catch(() => undefined); // awaited below, in order
    parts.push(part);
  }
  return concatParquetFiles(await Promise.all(parts));
}

/** The batches cut into consecutive runs of `size` rows (zero-copy slices). */
function sliceRows(batches: readonly arrow.RecordBatch[], size: number): arrow.RecordBatch[][] {
  const out: arrow.RecordBatch[][] = [];
  let current: arrow.RecordBatch[] = [];
  let room = size;
  for (const batch of batches) {
    let offset = 0;
    while (offset < batch.numRows) {
      const take = Math.min(room, batch.numRows - offset);
      current.push(take === batch.numRows ? batch : batch.slice(offset, offset + take));
      offset += take;
      room -= take;
      if (room === 0) {
        out.push(current);
        current = [];
        room = size;
      }
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}
