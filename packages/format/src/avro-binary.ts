/**
 * Avro binary encoding read directly from bytes, without avsc: a cursor with the primitive
 * decoders, and writer schemas compiled into a small type tree that can skip any value and read
 * the scalar ones. Used by decoders that only want a few fields of each record (manifest entries
 * during scan planning) and must not build a JS object per field they do not use.
 *
 * Longs follow avsc-container's convention: a `number` when the value is a safe integer, a
 * `bigint` otherwise.
 */

/** Raised by the cursor on malformed bytes; callers rethrow it with the file path. */
export class AvroBinaryError extends Error {
  override readonly name = 'AvroBinaryError';
}

/** A compiled Avro type (logical types are read as their underlying type). */
export type AvroBinaryType =
  | { readonly kind: 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string' | 'enum' }
  | { readonly kind: 'fixed'; readonly size: number }
  | { readonly kind: 'array'; readonly items: AvroBinaryType }
  | { readonly kind: 'map'; readonly values: AvroBinaryType }
  | { readonly kind: 'record'; readonly name: string; readonly fields: readonly AvroBinaryField[] }
  | { readonly kind: 'union'; readonly branches: readonly AvroBinaryType[] };

/** A field of a compiled record type. */
export interface AvroBinaryField {
  readonly name: string;
  readonly type: AvroBinaryType;
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/**
 * Compiles a writer schema (parsed JSON). Returns null for a schema it cannot follow (an unknown
 * type name, a malformed definition), so callers can fall back to avsc.
 */
export function compileAvroSchema(schema: unknown): AvroBinaryType | null {
  const named = new Map<string, AvroBinaryType>();
  const compile = (s: unknown, namespace: string): AvroBinaryType | null => {
    if (typeof s === 'string') {
      if (PRIMITIVES.has(s)) return { kind: s as 'null' };
      return named.get(s) ?? named.get(namespace === '' ? s : `${namespace}.${s}`) ?? null;
    }
    if (Array.isArray(s)) {
      const branches: AvroBinaryType[] = [];
      for (const b of s) {
        const t = compile(b, namespace);
        if (t === null) return null;
        branches.push(t);
      }
      return { kind: 'union', branches };
    }
    if (s === null || typeof s !== 'object') return null;
    const o = s as Record<string, unknown>;
    const type = o['type'];
    switch (type) {
      case 'record':
      case 'error': {
        const name = typeof o['name'] === 'string' ? o['name'] : '';
        const ns = name.includes('.')
          ? name.slice(0, name.lastIndexOf('.'))
          : typeof o['namespace'] === 'string'
            ? o['namespace']
            : namespace;
        const full = name.includes('.') || ns === '' ? name : `${ns}.${name}`;
        const fields: AvroBinaryField[] = [];
        const record = { kind: 'record' as const, name: full, fields };
        // Registered before its fields so a recursive reference resolves.
        named.set(full, record);
        if (!Array.isArray(o['fields'])) return null;
        for (const f of o['fields'] as unknown[]) {
          const fo = f as Record<string, unknown> | null;
          if (fo === null || typeof fo !== 'object' || typeof fo['name'] !== 'string') return null;
          const t = compile(fo['type'], ns);
          if (t === null) return null;
          fields.push({ name: fo['name'], type: t });
        }
        return record;
      }
      case 'enum':
      case 'fixed': {
        const name = typeof o['name'] === 'string' ? o['name'] : '';
        const ns = typeof o['namespace'] === 'string' ? o['namespace'] : namespace;
        const t: AvroBinaryType = type === 'enum' ? { kind: 'enum' } : { kind: 'fixed', size: Number(o['size']) };
        if (t.kind === 'fixed' && !(Number.isInteger(t.size) && t.size >= 0)) return null;
        named.set(name.includes('.') || ns === '' ? name : `${ns}.${name}`, t);
        return t;
      }
      case 'array': {
        const items = compile(o['items'], namespace);
        return items === null ? null : { kind: 'array', items };
      }
      case 'map': {
        const values = compile(o['values'], namespace);
        return values === null ? null : { kind: 'map', values };
      }
      default:
        // `{"type": "long", "logicalType": ...}` and other wrapped primitives or names.
        return typeof type === 'string' || (type !== null && typeof type === 'object') ? compile(type, namespace) : null;
    }
  };
  return compile(schema, '');
}

/**
 * Sequential reader over Avro binary data in `buf[pos, end)`. Reads past `end` are caught by the
 * length checks of bytes and strings and, for varints, by the caller checking `pos <= end` after a
 * record (a varint read beyond the buffer yields zeros and stops).
 */
export class AvroCursor {
  constructor(
    public buf: Buffer,
    public pos: number,
    public end: number,
  ) {}

  int(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++]!;
    let n = b & 0x7f;
    let shift = 7;
    while (b & 0x80) {
      if (shift > 28) throw new AvroBinaryError(`int varint longer than 5 bytes at offset ${pos}`);
      b = buf[pos++]!;
      n |= (b & 0x7f) << shift;
      shift += 7;
    }
    this.pos = pos;
    return (n >>> 1) ^ -(n & 1);
  }

  /** A long as number when it is a safe integer, else as bigint. */
  long(): number | bigint {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++]!;
    if ((b & 0x80) === 0) {
      this.pos = pos;
      return (b >>> 1) ^ -(b & 1);
    }
    // Up to 7 bytes (49 bits) add up exactly in a double.
    let n = b & 0x7f;
    let mul = 128;
    for (let i = 1; i < 7; i++) {
      b = buf[pos++]!;
      n += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        this.pos = pos;
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      mul *= 128;
    }
    return this.bigLongFrom(this.pos);
  }

  private bigLongFrom(start: number): number | bigint {
    const buf = this.buf;
    let pos = start;
    let n = 0n;
    let shift = 0n;
    for (;;) {
      if (shift > 63n) throw new AvroBinaryError(`long varint longer than 10 bytes at offset ${start}`);
      const b = buf[pos++]!;
      n |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) break;
    }
    this.pos = pos;
    n = BigInt.asUintN(64, n);
    const v = (n >> 1n) ^ -(n & 1n);
    return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
  }

  /** A length (of bytes, a string) checked against the bytes left. */
  length(): number {
    const len = this.long();
    if (typeof len !== 'number' || len < 0 || this.pos + len > this.end) {
      throw new AvroBinaryError(`length ${String(len)} at offset ${this.pos} runs past the end of the block (${this.end})`);
    }
    return len;
  }

  string(): string {
    const len = this.length();
    const start = this.pos;
    this.pos = start + len;
    return (this.buf as unknown as { utf8Slice(s: number, e: number): string }).utf8Slice(start, start + len);
  }

  /** A view of the next `bytes` value (shares the buffer). */
  bytesView(): Buffer {
    const len = this.length();
    const start = this.pos;
    this.pos = start + len;
    return this.buf.subarray(start, start + len);
  }

  /** Skips a `bytes`/`string` value; returns its start offset (its end is `pos`). */
  skipBytes(): number {
    const len = this.length();
    const start = this.pos;
    this.pos = start + len;
    return start;
  }

  /** Block count of an array or map; a negative count is followed by the block's byte size. */
  blockCount(): number {
    const n = this.long();
    if (typeof n !== 'number') throw new AvroBinaryError(`array block count ${n} at offset ${this.pos} is too large`);
    let count = n;
    if (n < 0) {
      this.long();
      count = -n;
    }
    // Every item takes at least one byte except nulls, which no manifest field repeats: a larger
    // count is garbage, and looping over it would hang.
    if (count > this.end - this.pos) {
      throw new AvroBinaryError(`array block count ${count} at offset ${this.pos} exceeds the ${this.end - this.pos} bytes left`);
    }
    return count;
  }

  /** Index of a union branch, checked against the number of branches. */
  branch(branches: number): number {
    const i = this.int();
    if (i < 0 || i >= branches) throw new AvroBinaryError(`union branch ${i} at offset ${this.pos} out of range (${branches} branches)`);
    return i;
  }

  skip(t: AvroBinaryType): void {
    switch (t.kind) {
      case 'null':
        return;
      case 'boolean':
        this.pos += 1;
        return;
      case 'int':
      case 'enum':
        this.int();
        return;
      case 'long':
        this.long();
        return;
      case 'float':
        this.pos += 4;
        return;
      case 'double':
        this.pos += 8;
        return;
      case 'bytes':
      case 'string':
        this.skipBytes();
        return;
      case 'fixed':
        this.pos += t.size;
        return;
      case 'array':
        for (let n = this.blockCount(); n > 0; n = this.blockCount()) for (let i = 0; i < n; i++) this.skip(t.items);
        return;
      case 'map':
        for (let n = this.blockCount(); n > 0; n = this.blockCount()) {
          for (let i = 0; i < n; i++) {
            this.skipBytes();
            this.skip(t.values);
          }
        }
        return;
      case 'record':
        for (const f of t.fields) this.skip(f.type);
        return;
      case 'union':
        this.skip(t.branches[this.branch(t.branches.length)]!);
        return;
    }
  }

  /**
   * Reads a scalar value the way avsc decodes it for the manifest models: null, boolean, number
   * (int, float, double, safe long), bigint (other longs), string, bytes (a view), or an array of
   * those. Records and maps are not scalars: {@link isScalarType} tells them apart beforehand.
   */
  scalar(t: AvroBinaryType): unknown {
    switch (t.kind) {
      case 'null':
        return null;
      case 'boolean':
        return this.buf[this.pos++] !== 0;
      case 'int':
        return this.int();
      case 'long':
        return this.long();
      case 'float': {
        const v = this.buf.readFloatLE(this.pos);
        this.pos += 4;
        return v;
      }
      case 'double': {
        const v = this.buf.readDoubleLE(this.pos);
        this.pos += 8;
        return v;
      }
      case 'string':
        return this.string();
      case 'bytes':
        return this.bytesView();
      case 'union':
        return this.scalar(t.branches[this.branch(t.branches.length)]!);
      case 'array': {
        const out: unknown[] = [];
        for (let n = this.blockCount(); n > 0; n = this.blockCount()) for (let i = 0; i < n; i++) out.push(this.scalar(t.items));
        return out;
      }
      default:
        throw new AvroBinaryError(`not a scalar Avro type: ${t.kind}`);
    }
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** True when {@link AvroCursor.scalar} can read values of `t`. */
export function isScalarType(t: AvroBinaryType): boolean {
  switch (t.kind) {
    case 'null':
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
    case 'bytes':
      return true;
    case 'union':
      return t.branches.every(isScalarType);
    case 'array':
      return isScalarType(t.items);
    default:
      return false;
  }
}
