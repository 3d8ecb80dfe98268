/**
 * Byte run-length encoding (BYTE columns, union tags) and booleans on top of it (PRESENT streams,
 * BOOLEAN columns: eight values a byte, most significant bit first).
 */
import { ByteCursor } from './byte-cursor.js';
import { OrcDecodeError } from './errors.js';

export class ByteRleDecoder {
  private readonly run = new Uint8Array(130);
  private runLength = 0;
  private runPos = 0;

  constructor(private readonly cursor: ByteCursor) {}

  /** Restarts at byte `offset` of the stream (a run header), then skips `values` values. */
  seek(offset: number, values: number): void {
    this.cursor.pos = offset;
    this.runLength = 0;
    this.runPos = 0;
    this.skip(values);
  }

  private fill(): void {
    const c = this.cursor;
    const control = c.byte();
    if (control < 0x80) {
      const n = control + 3;
      this.run.fill(c.byte(), 0, n);
      this.runLength = n;
    } else {
      const n = 0x100 - control;
      this.run.set(c.take(n), 0);
      this.runLength = n;
    }
    this.runPos = 0;
  }

  next(): number {
    if (this.runPos >= this.runLength) this.fill();
    return this.run[this.runPos++]!;
  }

  /** Reads `count` bytes into `out` from `offset`. */
  read(out: Uint8Array | Int8Array, offset: number, count: number): void {
    let i = 0;
    while (i < count) {
      if (this.runPos >= this.runLength) this.fill();
      const n = Math.min(count - i, this.runLength - this.runPos);
      for (let k = 0; k < n; k++) out[offset + i + k] = this.run[this.runPos + k]!;
      this.runPos += n;
      i += n;
    }
  }

  skip(count: number): void {
    for (let i = 0; i < count; i++) this.next();
  }
}

export class BooleanDecoder {
  private readonly bytes: ByteRleDecoder;
  private current = 0;
  private bitsLeft = 0;

  constructor(cursor: ByteCursor) {
    this.bytes = new ByteRleDecoder(cursor);
  }

  /** Restarts at byte `offset` (a run header), skips `bytes` bytes of the run, then `bits` bits. */
  seek(offset: number, bytes: number, bits: number): void {
    this.bytes.seek(offset, bytes);
    this.bitsLeft = 0;
    if (bits > 0) {
      if (bits > 7) throw new OrcDecodeError(`boolean position skips ${bits} bits of a byte`);
      this.current = this.bytes.next();
      this.bitsLeft = 8 - bits;
    }
  }

  next(): boolean {
    if (this.bitsLeft === 0) {
      this.current = this.bytes.next();
      this.bitsLeft = 8;
    }
    this.bitsLeft--;
    return ((this.current >>> this.bitsLeft) & 1) === 1;
  }

  skip(count: number): void {
    for (let i = 0; i < count; i++) this.next();
  }
}

/** Thrown by a caller that finds a decoded value out of its type's range. */
export function outOfRange(what: string, value: unknown): never {
  throw new OrcDecodeError(`${what}: value ${String(value)} is out of range`);
}
