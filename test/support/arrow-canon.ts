/**
 * A canonical, exact JS view of table values for integration tests, independent of tidemark's own
 * value conversion: {@link canonicalRows} reads Arrow data straight from its buffers, and
 * {@link arrowTableFromCanon} builds Arrow input straight from canonical values (raw buffers via
 * `arrow.makeData`, no apache-arrow builders and no tidemark code apart from the shared
 * Paimon → Arrow type mapping).
 *
 * Canonical values per Paimon type:
 * BOOLEAN → boolean; TINYINT/SMALLINT/INT → number; BIGINT → bigint; FLOAT/DOUBLE → number;
 * DECIMAL → plain decimal string with exactly `scale` fraction digits (`'-0.05'`); CHAR/VARCHAR/STRING →
 * string; BINARY/VARBINARY/BYTES → Uint8Array; DATE → days since 1970-01-01; TIME → millisecond of
 * the day; TIMESTAMP/TIMESTAMP_LTZ → bigint epoch value in the column's Arrow unit (ms for p ≤ 3,
 * µs for p ≤ 6, ns above); ARRAY → array; MAP → array of `[key, value]`; ROW → object by field name.
 * These are also valid row-object inputs of `TableWrite.write`.
 */
import * as arrow from 'apache-arrow';
import { toArrowSchema, toArrowType, type DataField, type DataType } from '@tidemark/format';

export type Canon = boolean | number | bigint | string | Uint8Array | null | readonly Canon[] | { readonly [k: string]: Canon };
export type CanonRow = Record<string, Canon>;

// ---- reading ----------------------------------------------------------------------------------

/** Canonical rows of an Arrow table whose columns are `fields` (by name), in table order. */
export function canonicalRows(table: arrow.Table, fields: readonly DataField[]): CanonRow[] {
  const rows: CanonRow[] = [];
  for (const batch of table.batches) {
    const cols = fields.map((f) => {
      const idx = batch.schema.fields.findIndex((x) => x.name === f.name);
      if (idx < 0)
        throw new Error(`column '${f.name}' missing from the Arrow result (${batch.schema.fields.map((x) => x.name).join(', ')})`);
      return batch.data.children[idx]!;
    });
    for (let i = 0; i < batch.numRows; i++) {
      const row: CanonRow = {};
      fields.forEach((f, c) => (row[f.name] = cell(cols[c]!, f.type, i)));
      rows.push(row);
    }
  }
  return rows;
}

/** Canonical value at row `i` of `data`, whose Paimon type is `type`. */
export function cell(data: arrow.Data, type: DataType, i: number): Canon {
  if (!data.getValid(i)) return null;
  const values = data.values as unknown;
  switch (type.root) {
    case 'BOOLEAN': {
      // Bool buffers are not sliced: the bit position includes the data offset.
      const pos = data.offset + i;
      return (((values as Uint8Array)[pos >> 3]! >> (pos & 7)) & 1) === 1;
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'FLOAT':
    case 'DOUBLE':
    case 'DATE':
    case 'TIME':
      return (values as ArrayLike<number>)[i]!;
    case 'BIGINT':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return (values as BigInt64Array)[i]!;
    case 'DECIMAL': {
      const words = values as Uint32Array;
      const stride = data.stride;
      let x = 0n;
      for (let w = stride - 1; w >= 0; w--) x = (x << 32n) | BigInt(words[i * stride + w]!);
      return plainDecimal(BigInt.asIntN(stride * 32, x), type.scale);
    }
    case 'CHAR':
    case 'VARCHAR': {
      const o = data.valueOffsets as Int32Array;
      return new TextDecoder().decode((values as Uint8Array).subarray(o[i]!, o[i + 1]!));
    }
    case 'BINARY':
    case 'VARBINARY': {
      const o = data.valueOffsets as Int32Array;
      return (values as Uint8Array).slice(o[i]!, o[i + 1]!);
    }
    case 'ARRAY': {
      const o = data.valueOffsets as Int32Array;
      const child = data.children[0]!;
      const out: Canon[] = [];
      for (let j = o[i]!; j < o[i + 1]!; j++) out.push(cell(child, type.element, j));
      return out;
    }
    case 'MAP':
    case 'MULTISET': {
      const o = data.valueOffsets as Int32Array;
      const entries = data.children[0]!;
      const keyType = type.root === 'MAP' ? type.key : type.element;
      const valueType: DataType = type.root === 'MAP' ? type.value : { root: 'INT', nullable: false };
      const out: Canon[] = [];
      for (let j = o[i]!; j < o[i + 1]!; j++) {
        out.push([cell(entries.children[0]!, keyType, j), cell(entries.children[1]!, valueType, j)]);
      }
      return out;
    }
    case 'ROW': {
      const out: Record<string, Canon> = {};
      type.fields.forEach((f, k) => (out[f.name] = cell(data.children[k]!, f.type, i)));
      return out;
    }
  }
}

/** `unscaled × 10^-scale` as plain text with exactly `scale` fraction digits. */
export function plainDecimal(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return neg ? `-${text}` : text;
}

/** Rows sorted by a numeric/bigint column (reads guarantee no order across splits). */
export function sortBy(rows: CanonRow[], column: string): CanonRow[] {
  return [...rows].sort((a, b) => {
    const x = a[column] as number | bigint;
    const y = b[column] as number | bigint;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

// ---- building ---------------------------------------------------------------------------------

/** An Arrow table with the table's Arrow schema (shared type mapping) holding `rows`. */
export function arrowTableFromCanon(fields: readonly DataField[], rows: readonly CanonRow[]): arrow.Table {
  const schema = toArrowSchema(fields);
  const children = fields.map((f) =>
    build(
      f.type,
      rows.map((r) => r[f.name] ?? null),
    ),
  );
  const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: rows.length, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(schema, data)]);
}

function validity(values: readonly Canon[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { nullBitmap, nullCount };
}

function build(type: DataType, values: readonly Canon[]): arrow.Data {
  const t = toArrowType(type);
  const n = values.length;
  const common = { type: t, length: n, ...validity(values) } as const;
  const make = (props: Record<string, unknown>): arrow.Data => arrow.makeData({ ...common, ...props } as never);
  switch (type.root) {
    case 'BOOLEAN': {
      const data = new Uint8Array((n + 7) >> 3);
      values.forEach((v, i) => v === true && (data[i >> 3]! |= 1 << (i & 7)));
      return make({ data });
    }
    case 'TINYINT':
      return make({ data: Int8Array.from(values, (v) => (v as number) ?? 0) });
    case 'SMALLINT':
      return make({ data: Int16Array.from(values, (v) => (v as number) ?? 0) });
    case 'INT':
    case 'DATE':
    case 'TIME':
      return make({ data: Int32Array.from(values, (v) => (v as number) ?? 0) });
    case 'FLOAT':
      return make({ data: Float32Array.from(values, (v) => (v as number) ?? 0) });
    case 'DOUBLE':
      return make({ data: Float64Array.from(values, (v) => (v as number) ?? 0) });
    case 'BIGINT':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return make({ data: BigInt64Array.from(values, (v) => (v as bigint) ?? 0n) });
    case 'DECIMAL': {
      const data = new Uint32Array(n * 4);
      values.forEach((v, i) => {
        if (v === null) return;
        const x = BigInt.asUintN(128, parseUnscaled(v as string, type.scale));
        for (let w = 0; w < 4; w++) data[i * 4 + w] = Number((x >> BigInt(32 * w)) & 0xffffffffn);
      });
      return make({ data });
    }
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY': {
      const enc = new TextEncoder();
      const parts = values.map((v) => (v === null ? new Uint8Array(0) : typeof v === 'string' ? enc.encode(v) : (v as Uint8Array)));
      const valueOffsets = new Int32Array(n + 1);
      parts.forEach((p, i) => (valueOffsets[i + 1] = valueOffsets[i]! + p.length));
      const data = new Uint8Array(valueOffsets[n]!);
      parts.forEach((p, i) => data.set(p, valueOffsets[i]!));
      return make({ valueOffsets, data });
    }
    case 'ARRAY': {
      const { valueOffsets, flat } = flatten(values.map((v) => (v ?? []) as readonly Canon[]));
      return make({ valueOffsets, child: build(type.element, flat) });
    }
    case 'MAP': {
      const { valueOffsets, flat } = flatten(values.map((v) => (v ?? []) as readonly Canon[]));
      const pairs = flat as unknown as ReadonlyArray<readonly [Canon, Canon]>;
      const entriesType = (t as arrow.Map_).children[0]!.type as arrow.Struct;
      const entries = arrow.makeData({
        type: entriesType,
        length: pairs.length,
        nullCount: 0,
        children: [
          build(
            type.key,
            pairs.map((p) => p[0]),
          ),
          build(
            type.value,
            pairs.map((p) => p[1]),
          ),
        ],
      });
      return make({ valueOffsets, child: entries });
    }
    case 'ROW': {
      const objs = values.map((v) => (v ?? {}) as Record<string, Canon>);
      return make({
        children: type.fields.map((f) =>
          build(
            f.type,
            objs.map((o) => o[f.name] ?? null),
          ),
        ),
      });
    }
    case 'MULTISET':
      throw new Error('MULTISET is not supported by this test helper');
  }
}

function flatten(lists: ReadonlyArray<readonly Canon[]>): { valueOffsets: Int32Array; flat: Canon[] } {
  const valueOffsets = new Int32Array(lists.length + 1);
  const flat: Canon[] = [];
  lists.forEach((l, i) => {
    flat.push(...l);
    valueOffsets[i + 1] = flat.length;
  });
  return { valueOffsets, flat };
}

/** Unscaled value of a plain decimal string with at most `scale` fraction digits. */
function parseUnscaled(text: string, scale: number): bigint {
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (!m || (m[3] ?? '').length > scale) throw new Error(`bad decimal '${text}' for scale ${scale}`);
  const u = BigInt(m[2]! + (m[3] ?? '').padEnd(scale, '0'));
  return m[1] ? -u : u;
}
