/**
 * Builds a minimal Parquet file with one INT96 column, the way parquet-mr (Paimon Java) stores
 * TIMESTAMP(7..9). No JS writer can produce INT96, so the Thrift footer is encoded by hand
 * (compact protocol, one PLAIN uncompressed v1 data page).
 */

/** One INT96 value as Java writes it: little-endian int64 nanosOfDay, then int32 julianDay. */
export interface Int96Value {
  readonly julianDay: number;
  readonly nanosOfDay: bigint;
}

/** Java Paimon's encoding (truncating division, so pre-1970 nanosOfDay is negative). */
export function javaInt96(millis: bigint, nanoOfMilli: number): Int96Value {
  const day = 86_400_000n;
  return {
    julianDay: Number(millis / day + 2440588n),
    nanosOfDay: (millis % day) * 1_000_000n + BigInt(nanoOfMilli),
  };
}

type Value =
  | { t: 'i32'; v: number }
  | { t: 'i64'; v: bigint | number }
  | { t: 'bin'; v: Uint8Array | string }
  | { t: 'list'; elem: 'i32' | 'bin' | 'struct'; v: Value[] }
  | { t: 'struct'; v: Field[] };
type Field = [number, Value];

const TYPE = { i32: 5, i64: 6, bin: 8, list: 9, struct: 12 } as const;

class Out {
  bytes: number[] = [];
  varint(n: bigint): void {
    let x = n;
    while (x >= 0x80n) {
      this.bytes.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.bytes.push(Number(x));
  }
  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }
  value(v: Value): void {
    switch (v.t) {
      case 'i32':
      case 'i64':
        this.zigzag(BigInt(v.v));
        break;
      case 'bin': {
        const b = typeof v.v === 'string' ? new TextEncoder().encode(v.v) : v.v;
        this.varint(BigInt(b.length));
        this.bytes.push(...b);
        break;
      }
      case 'list':
        if (v.v.length < 15) this.bytes.push((v.v.length << 4) | TYPE[v.elem]);
        else {
          this.bytes.push(0xf0 | TYPE[v.elem]);
          this.varint(BigInt(v.v.length));
        }
        for (const e of v.v) this.value(e);
        break;
      case 'struct': {
        let last = 0;
        for (const [id, fv] of v.v) {
          const delta = id - last;
          if (delta > 0 && delta <= 15) this.bytes.push((delta << 4) | TYPE[fv.t]);
          else {
            this.bytes.push(TYPE[fv.t]);
            this.zigzag(BigInt(id));
          }
          this.value(fv);
          last = id;
        }
        this.bytes.push(0);
      }
    }
  }
}

const i32 = (v: number): Value => ({ t: 'i32', v });
const i64 = (v: number | bigint): Value => ({ t: 'i64', v });
const str = (v: string): Value => ({ t: 'bin', v });
const struct = (...v: Field[]): Value => ({ t: 'struct', v });

function thrift(v: Value): Uint8Array {
  const out = new Out();
  out.value(v);
  return Uint8Array.from(out.bytes);
}

/** Builds the file; `null` entries become nulls of an OPTIONAL column. */
export function int96ParquetFile(column: string, fieldId: number, values: readonly (Int96Value | null)[]): Uint8Array {
  const present = values.filter((v): v is Int96Value => v !== null);
  // Definition levels: bit-packed run (bit width 1) of ceil(n/8) groups, prefixed by its length.
  const groups = Math.ceil(values.length / 8);
  const levels = new Uint8Array(1 + groups);
  levels[0] = (groups << 1) | 1;
  values.forEach((v, i) => {
    if (v !== null) levels[1 + (i >> 3)]! |= 1 << (i & 7);
  });
  const data = new Uint8Array(4 + levels.length + 12 * present.length);
  const view = new DataView(data.buffer);
  view.setUint32(0, levels.length, true);
  data.set(levels, 4);
  present.forEach((v, i) => {
    const at = 4 + levels.length + 12 * i;
    view.setBigInt64(at, v.nanosOfDay, true);
    view.setInt32(at + 8, v.julianDay, true);
  });
  const pageHeader = thrift(
    struct(
      [1, i32(0)],
      [2, i32(data.length)],
      [3, i32(data.length)],
      [5, struct([1, i32(values.length)], [2, i32(0)], [3, i32(3)], [4, i32(3)])],
    ),
  );
  const dataPageOffset = 4;
  const chunkSize = pageHeader.length + data.length;
  const footer = thrift(
    struct(
      [1, i32(1)],
      [
        2,
        {
          t: 'list',
          elem: 'struct',
          v: [struct([4, str('paimon_schema')], [5, i32(1)]), struct([1, i32(3)], [3, i32(1)], [4, str(column)], [9, i32(fieldId)])],
        },
      ],
      [3, i64(values.length)],
      [
        4,
        {
          t: 'list',
          elem: 'struct',
          v: [
            struct(
              [
                1,
                {
                  t: 'list',
                  elem: 'struct',
                  v: [
                    struct(
                      [2, i64(dataPageOffset)],
                      [
                        3,
                        struct(
                          [1, i32(3)],
                          [2, { t: 'list', elem: 'i32', v: [i32(0), i32(3)] }],
                          [3, { t: 'list', elem: 'bin', v: [str(column)] }],
                          [4, i32(0)],
                          [5, i64(values.length)],
                          [6, i64(chunkSize)],
                          [7, i64(chunkSize)],
                          [9, i64(dataPageOffset)],
                        ),
                      ],
                    ),
                  ],
                },
              ],
              [2, i64(chunkSize)],
              [3, i64(values.length)],
            ),
          ],
        },
      ],
      [6, str('parquet-mr version 1.13.1 (handmade test file)')],
    ),
  );
  const magic = new TextEncoder().encode('PAR1');
  const file = new Uint8Array(4 + chunkSize + footer.length + 8);
  file.set(magic, 0);
  file.set(pageHeader, 4);
  file.set(data, 4 + pageHeader.length);
  file.set(footer, 4 + chunkSize);
  new DataView(file.buffer).setUint32(4 + chunkSize + footer.length, footer.length, true);
  file.set(magic, file.length - 4);
  return file;
}
