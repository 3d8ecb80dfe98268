/**
 * The two pieces of Java's `DataOutput` the file-index header uses besides big-endian ints:
 * `writeUTF` (a 2-byte length, then "modified UTF-8": NUL as two bytes, characters beyond the BMP
 * as their two surrogates of three bytes each) and the iteration order of a `java.util.HashMap`
 * with string keys, which decides the order of the columns Java writes.
 */

/** Java `DataOutput.writeUTF` bytes of `s` (length prefix included). */
export function javaUtf(s: string): Uint8Array {
  const bytes: number[] = [0, 0];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x01 && c <= 0x7f) bytes.push(c);
    else if (c <= 0x7ff) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  const n = bytes.length - 2;
  if (n > 0xffff) throw new RangeError(`name too long for Java's writeUTF (${n} bytes): ${s.slice(0, 40)}…`);
  bytes[0] = n >> 8;
  bytes[1] = n & 0xff;
  return Uint8Array.from(bytes);
}

/** Decodes Java `readUTF` bytes (`length` bytes of modified UTF-8, prefix not included). */
export function readJavaUtf(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i += 1;
    } else if ((b & 0xe0) === 0xc0) {
      out += String.fromCharCode(((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f));
      i += 2;
    } else {
      out += String.fromCharCode(((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f));
      i += 3;
    }
  }
  return out;
}

/** Java's `String.hashCode`. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The order in which a `java.util.HashMap` (default capacity 16, load factor 0.75) iterates the
 * distinct `keys` inserted in this order: by bucket of the final table, insertion order within a
 * bucket (what resizing keeps). Buckets Java turns into trees (8+ colliding keys) are not modelled.
 */
export function javaHashMapOrder(keys: readonly string[]): string[] {
  let capacity = 16;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const bucket = (k: string): number => {
    const h = javaStringHash(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys
    .map((k, i) => ({ k, i, b: bucket(k) }))
    .sort((x, y) => x.b - y.b || x.i - y.i)
    .map((x) => x.k);
}
