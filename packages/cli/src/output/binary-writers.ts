/**
 * Binary result formats of `read` and `sql`: Apache Arrow IPC (the file format for `--output`,
 * the stream format on stdout, which cannot seek back to write a footer) and Parquet. Both stream:
 * memory holds a batch (Arrow) or a row group (Parquet), never the whole result.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { RecordBatch, RecordBatchFileWriter, RecordBatchStreamWriter, type Schema } from 'apache-arrow';
import { encodeParquetStream } from '@tidemark/format';

/** The values `--format` accepts for binary output. */
export const BINARY_FORMATS = ['parquet', 'arrow'] as const;
export type BinaryFormat = (typeof BINARY_FORMATS)[number];

/** Options of {@link writeBinary}. */
export interface WriteBinaryOptions {
  readonly format: BinaryFormat;
  /** Schema of the result: written even when there are no rows. */
  readonly schema: Schema;
  /** Arrow only: `file` (seekable targets, with a footer) or `stream` (pipes). */
  readonly arrowContainer: 'file' | 'stream';
  readonly signal?: AbortSignal;
}

/** Writes `batches` to `out` as Arrow IPC or Parquet, honouring backpressure; does not end `out`. Resolves with the row count. */
export async function writeBinary(
  batches: AsyncIterable<RecordBatch>,
  out: Writable,
  options: WriteBinaryOptions,
): Promise<{ rows: number }> {
  let rows = 0;
  async function* counted(): AsyncGenerator<RecordBatch> {
    for await (const b of batches) {
      options.signal?.throwIfAborted();
      rows += b.numRows;
      yield b;
    }
  }
  const chunks = options.format === 'parquet' ? encodeParquetStream(counted(), options.schema) : arrowChunks(counted(), options);
  for await (const chunk of chunks) await writeBytes(out, chunk, options.signal);
  return { rows };
}

/**
 * Arrow IPC bytes of `batches`, batch by batch. The writer encodes a batch synchronously into its
 * queue; the bytes are taken out before the next batch is written, so only one batch's bytes wait
 * at a time (the writer's own Node adapter reads ahead without backpressure).
 */
async function* arrowChunks(batches: AsyncIterable<RecordBatch>, options: WriteBinaryOptions): AsyncGenerator<Uint8Array> {
  const writer = options.arrowContainer === 'file' ? new RecordBatchFileWriter() : new RecordBatchStreamWriter();
  writer.reset(undefined, options.schema);
  const queue = writer[Symbol.asyncIterator]();
  const nothingBuffered = Symbol('nothing buffered');
  // A read of an empty queue stays pending until the next write fills it; it is kept, not lost.
  let pendingRead: Promise<IteratorResult<Uint8Array>> | undefined;
  async function* buffered(waitForEnd: boolean): AsyncGenerator<Uint8Array> {
    for (;;) {
      pendingRead ??= queue.next();
      const r = waitForEnd
        ? await pendingRead
        : await Promise.race([pendingRead, new Promise<typeof nothingBuffered>((res) => setImmediate(() => res(nothingBuffered)))]);
      if (r === nothingBuffered) return;
      pendingRead = undefined;
      if (r.done) return;
      yield r.value;
    }
  }
  let wrote = false;
  for await (const batch of batches) {
    writer.write(batch);
    wrote = true;
    yield* buffered(false);
  }
  // A result without rows still states its schema.
  if (!wrote) writer.write(new RecordBatch(options.schema, undefined));
  writer.close();
  yield* buffered(true);
}

/** Writes `bytes`, waiting for `drain` when the stream asks for it. */
export async function writeBytes(out: Writable, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
  if (out.write(bytes)) return;
  await once(out, 'drain', signal ? { signal } : {});
}
