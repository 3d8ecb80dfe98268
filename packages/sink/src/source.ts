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
}

/** A source whose records can be read again from any offset it produced. */
export interface ReplayableSource<T = Record<string, unknown>> {
  /** Stable identity, stored in checkpoints to detect a pipeline restarted on another source. */
  readonly id: string;
  /** True when the source ends (a file); false for endless sources. */
  readonly bounded: boolean;
  /** Reads records from `from` (null = the beginning), in order, each with the offset after it. */
  open(from: SourceOffset): AsyncIterable<SourceRecord<T>>;
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

  constructor(readonly path: string) {
    this.id = `jsonl:${resolvePath(path)}`;
  }

  async *open(from: SourceOffset): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    const start = from === null ? 0 : from;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
      throw new SourceError(`offset ${JSON.stringify(from)} is not a byte offset of JSON-lines source ${this.path}`);
    }
    let size: number;
    try {
      size = (await stat(this.path)).size;
    } catch (e) {
      throw new SourceError(`cannot open JSON-lines source ${this.path}: ${(e as Error).message}`, { cause: e });
    }
    if (start > size) throw new SourceError(`offset ${start} is past the end of ${this.path} (${size} bytes): was the file truncated or replaced?`);
    if (start === size) return;
    let pos = start;
    let carry: Buffer = Buffer.alloc(0);
    for await (const chunk of createReadStream(this.path, { start, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      let buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let i: number;
      while ((i = buf.indexOf(10)) >= 0) {
        const line = buf.subarray(0, i);
        pos += i + 1;
        buf = buf.subarray(i + 1);
        const value = this.parse(line, pos - i - 1);
        if (value !== undefined) yield { value, offset: pos };
      }
      carry = Buffer.from(buf);
    }
    if (carry.length > 0) {
      const value = this.parse(carry, pos);
      pos += carry.length;
      if (value !== undefined) yield { value, offset: pos };
    }
  }

  private parse(line: Buffer, at: number): Record<string, unknown> | undefined {
    const text = line.toString('utf8').trim();
    if (text === '') return undefined;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new SourceError(`${this.path} at byte ${at}: not valid JSON (${(e as Error).message})`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new SourceError(`${this.path} at byte ${at}: expected a JSON object per line`);
    return v as Record<string, unknown>;
  }
}
