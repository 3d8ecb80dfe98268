/**
 * Replayable sources: a source can be re-opened at any offset it handed out, so that records after
 * the last completed checkpoint are read again after a crash. Kafka-like sources implement the same
 * interface with an offset such as `{ "<partition>": <next offset> }`.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { SourceOffset } from './checkpoint-state.js';
import { SourceError } from './errors.js';

/** One record and the source position right after it (where to resume once it is committed). */
export interface SourceRecord<T> {
  readonly value: T;
  readonly offset: SourceOffset;
  /** Where the record is in the source, for error messages (e.g. `/data/in.jsonl line 17`). */
  readonly position?: string;
  /**
   * True for a record that only moves the source position past data that makes no rows (Kafka
   * tombstones a format skips, transaction markers): not written, its offset committed with the
   * next checkpoint (or the last, at the end of the source), so the committed position and the
   * lag reach the end of the source.
   */
  readonly positionOnly?: boolean;
}

/** Options of {@link ReplayableSource.open}. */
export interface SourceOpenOptions {
  /**
   * Once aborted, the iteration ends promptly (without an error), also while it waits for new
   * records: the pipeline is stopping and will checkpoint what it has read.
   */
  readonly signal?: AbortSignal;
}

/**
 * How far one partition of a source is ahead of the pipeline's committed position (the lag is
 * `end - committed`, in the source's unit: messages for Kafka, bytes for a file).
 */
export interface SourceBacklog {
  /** The partition, e.g. `orders/3` (topic/partition) or a file's path. */
  readonly partition: string;
  /** Its end (high watermark): the offset the next record written to it will end at or after. */
  readonly end: number;
  /** The position in it everything before which is committed. */
  readonly committed: number;
}

/** A source whose records can be read again from any offset it produced. */
export interface ReplayableSource<T = Record<string, unknown>> {
  /** Stable identity, stored in checkpoints to detect a pipeline restarted on another source. */
  readonly id: string;
  /** True when the source ends (a file); false for endless sources. */
  readonly bounded: boolean;
  /** Reads records from `from` (null = the beginning), in order, each with the offset after it. */
  open(from: SourceOffset, options?: SourceOpenOptions): AsyncIterable<SourceRecord<T>>;
  /**
   * Optional: each partition's end and the position in it of the offset `committed` (as stored in
   * a checkpoint; null = nothing committed), for lag metrics. Asked while the pipeline runs, so it
   * must not disturb an open iteration.
   */
  backlog?(committed: SourceOffset): Promise<readonly SourceBacklog[]>;
  /**
   * Called after everything before `offset` is committed to the table (after each checkpoint's
   * commit and after a restore), e.g. to report offsets to a Kafka consumer group. Best effort:
   * the driver logs a failure and goes on; restores never read what this reported.
   */
  committed?(offset: SourceOffset, pipeline: { readonly table: string; readonly commitUser: string }): Promise<void>;
}

/**
 * A JSON-lines file: one JSON object per line; blank lines are skipped. The offset is the byte
 * position after a record's line, so a resume seeks directly to it. A last line without a
 * trailing newline is a record too. Numbers are parsed as JS numbers (exact up to 2^53); give
 * larger BIGINT values as strings.
 */
export class JsonLinesFileSource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  readonly id: string;

  /** With `allowNull`, a line `null` (a Kafka tombstone dumped to a file) is a record whose value is null. */
  constructor(
    readonly path: string,
    private readonly options: { readonly allowNull?: boolean } = {},
  ) {
    this.id = `jsonl:${resolvePath(path)}`;
  }

  async *open(from: SourceOffset, options: SourceOpenOptions = {}): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    const start = this.byteOffset(from);
    const size = await this.size();
    const signal = options.signal;
    if (start > size)
      throw new SourceError(`offset ${start} is past the end of ${this.path} (${size} bytes): was the file truncated or replaced?`);
    if (start === size) return;
    // Line numbers only serve error messages; after a resume they are counted from the start.
    let line = start === 0 ? 0 : await countNewlines(this.path, start);
    let pos = start;
    let carry: Buffer = Buffer.alloc(0);
    for await (const chunk of createReadStream(this.path, { start, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      let buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let i: number;
      while ((i = buf.indexOf(10)) >= 0) {
        if (signal?.aborted) return;
        const bytes = buf.subarray(0, i);
        pos += i + 1;
        buf = buf.subarray(i + 1);
        line++;
        const value = this.parse(bytes, pos - i - 1, line);
        if (value !== undefined) yield { value, offset: pos, position: `${this.path} line ${line}` };
      }
      carry = Buffer.from(buf);
    }
    if (carry.length > 0 && !signal?.aborted) {
      line++;
      const value = this.parse(carry, pos, line);
      pos += carry.length;
      if (value !== undefined) yield { value, offset: pos, position: `${this.path} line ${line}` };
    }
  }

  /** The file's size against the byte offset of `committed` (one partition: the file). */
  async backlog(committed: SourceOffset): Promise<readonly SourceBacklog[]> {
    return [{ partition: resolvePath(this.path), end: await this.size(), committed: this.byteOffset(committed) }];
  }

  /** The byte position of an offset this source produced (null: the start). */
  private byteOffset(from: SourceOffset): number {
    const start = from === null ? 0 : from;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
      throw new SourceError(`offset ${JSON.stringify(from)} is not a byte offset of JSON-lines source ${this.path}`);
    }
    return start;
  }

  private async size(): Promise<number> {
    try {
      const st = await stat(this.path);
      if (!st.isFile())
        throw new SourceError(`JSON-lines source ${this.path} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}`);
      return st.size;
    } catch (e) {
      if (e instanceof SourceError) throw e;
      const code = (e as { code?: string }).code;
      throw new SourceError(`cannot open JSON-lines source ${this.path}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`, {
        cause: e,
      });
    }
  }

  private parse(bytes: Buffer, at: number, line: number): Record<string, unknown> | undefined {
    const where = `${this.path} line ${line} (byte ${at})`;
    // A UTF-8 byte order mark may start the file; anything not UTF-8 is refused, never read as U+FFFD.
    const body = at === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
    let text: string;
    try {
      text = UTF8.decode(body).trim();
    } catch {
      throw new SourceError(`${where}: not valid UTF-8; convert the file to UTF-8`);
    }
    if (text === '') return undefined;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new SourceError(`${where}: not valid JSON (${(e as Error).message})`);
    }
    if (v === null && this.options.allowNull) return null as unknown as Record<string, unknown>;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new SourceError(`${where}: expected a JSON object per line`);
    return v as Record<string, unknown>;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Number of newline bytes in the first `end` bytes of the file. */
async function countNewlines(path: string, end: number): Promise<number> {
  let n = 0;
  for await (const chunk of createReadStream(path, { start: 0, end: end - 1, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) n++;
  }
  return n;
}
