/**
 * Parquet encoding on worker threads.
 *
 * parquet-wasm is single-threaded and blocks its thread for seconds per file (libraries.md §5), so
 * a writer that encodes on the main thread uses one core and freezes the event loop meanwhile.
 * The pool keeps the JS half of {@link writeParquetFile} (Arrow → IPC stream, with its fixes) on
 * the calling thread and runs the wasm half in workers: IPC bytes go over as a transferred
 * ArrayBuffer, Parquet bytes come back the same way, so neither direction copies.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

import type * as arrow from 'apache-arrow';

import { FormatError } from './errors.js';
import { encodeParquetIpc, prepareParquetInput, type ParquetEncodeSettings, type ParquetWriteOptions } from './parquet-writer.js';

/** A Parquet encode worker failed: it crashed, exited, or parquet-wasm rejected the job. */
export class ParquetEncodeError extends FormatError {}

/** Settings of a {@link ParquetEncodePool}: worker count and script. */
export interface ParquetEncodePoolOptions {
  /**
   * Number of worker threads; 0 encodes on the calling thread. Default: the
   * `TIDEMARK_PARQUET_WORKERS` environment variable, else min(2, available parallelism).
   */
  readonly size?: number;
  /** Worker script; defaults to the package's `worker/parquet-encode-worker.mjs`. */
  readonly workerUrl?: URL;
}

interface Job {
  readonly id: number;
  readonly ipc: Uint8Array;
  readonly settings: ParquetEncodeSettings;
  readonly resolve: (bytes: Uint8Array) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
}

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly bytes?: Uint8Array;
  readonly error?: { readonly name: string; readonly message: string };
}

// src/ and dist/ are siblings, so this resolves to the same file from the sources and the build.
const DEFAULT_WORKER_URL = new URL('../worker/parquet-encode-worker.mjs', import.meta.url);

/**
 * Size the environment asks for: `TIDEMARK_PARQUET_WORKERS` (0 = encode on the calling thread),
 * else min(2, available parallelism). One worker already overlaps encoding with the caller's work.
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
 * A small pool of worker threads running parquet-wasm. Workers start lazily on the first job
 * (each instantiates its own wasm, ~75–100 ms), stay warm, and are unref'd while idle so they
 * never keep the process alive. A worker that crashes rejects its job with
 * {@link ParquetEncodeError} and is replaced by the next job.
 */
export class ParquetEncodePool {
  /** Number of worker threads (0 = in-thread encoding). */
  readonly size: number;
  private readonly workerUrl: URL;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(options: ParquetEncodePoolOptions = {}) {
    const size = options.size ?? defaultParquetWorkerCount();
    if (!Number.isInteger(size) || size < 0) {
      throw new FormatError(`ParquetEncodePool size must be a non-negative integer, got ${size}`);
    }
    this.size = size;
    this.workerUrl = options.workerUrl ?? DEFAULT_WORKER_URL;
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
    const whole = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength && ipc.buffer instanceof ArrayBuffer;
    const own = whole ? ipc : ipc.slice();
    return new Promise<Uint8Array>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, ipc: own, settings, resolve, reject });
      this.dispatch();
    });
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
    for (const job of this.queue.splice(0)) job.reject(new ParquetEncodeError('the Parquet encode pool was closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.job?.reject(new ParquetEncodeError('the Parquet encode pool was closed while encoding'));
      slot.job = undefined;
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
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
      slot.worker.postMessage({ id: job.id, ipc: job.ipc, settings: job.settings }, [job.ipc.buffer as ArrayBuffer]);
    }
  }

  private spawn(): Slot {
    // Node hands the parent's execArgv to workers; `--input-type` (e.g. from `node -e`) makes a
    // worker fail to start, and the worker needs no other flag of the parent's.
    const worker = new Worker(this.workerUrl, { execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')) });
    const slot: Slot = { worker, job: undefined };
    worker.on('message', (reply: Reply) => {
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = undefined;
      worker.unref();
      if (reply.ok && reply.bytes) job.resolve(reply.bytes);
      else {
        const err = reply.error ?? { name: 'Error', message: 'no result' };
        job.reject(new ParquetEncodeError(`parquet-wasm failed to encode the file: ${err.name}: ${err.message}`));
      }
      this.dispatch();
    });
    const fail = (why: string, cause?: unknown): void => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      const job = slot.job;
      slot.job = undefined;
      job?.reject(new ParquetEncodeError(`Parquet encode worker ${why}; the file was not written`, { cause }));
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

let shared: ParquetEncodePool | undefined;

/** The process-wide pool used by {@link encodeParquetAsync} (created on first use). */
export function sharedParquetEncodePool(): ParquetEncodePool {
  shared ??= new ParquetEncodePool();
  return shared;
}

/** Options of {@link encodeParquetAsync}: the write options plus the pool to use. */
export interface EncodeParquetAsyncOptions extends ParquetWriteOptions {
  /**
   * Pool to encode on; `false` encodes on the calling thread. Default: the shared pool, sized by
   * `TIDEMARK_PARQUET_WORKERS` (0 disables the workers) or min(2, available parallelism).
   */
  readonly pool?: ParquetEncodePool | false;
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
  return (pool ?? sharedParquetEncodePool()).encodeIpc(ipc, settings);
}
