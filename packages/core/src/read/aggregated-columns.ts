/**
 * Turning the cells of the aggregation merge engine back into Arrow columns, and reading the
 * inputs of the aggregate functions from the chunks of a merged bucket. Cells that reference a
 * record are copied with {@link takeChunks} (exact for every type); computed values are written
 * into fresh buffers of the column's Arrow type (only the types sum/product/listagg/bool_and/or
 * accept); collected elements and merged map entries are gathered from the child data.
 */
import * as arrow from 'apache-arrow';
import type { DataType, Value } from '@tidemark/format';
import type { AggregatedCell, AggregationInput, ElementRef } from './aggregate-functions.js';
import { nullData, takeChunks } from './arrow-take.js';
import { valueReader } from './arrow-values.js';

/**
 * An {@link AggregationInput} over the chunks of each column (`chunks[column][record.chunk]`),
 * typed by the Paimon `types` of the columns. Readers are created lazily per chunk.
 */
export function chunkedAggregationInput(chunks: readonly (readonly arrow.Data[])[], types: readonly DataType[]): AggregationInput {
  const scalar: ((i: number) => Value)[][] = chunks.map(() => []);
  const elements: ((i: number) => ElementRef[])[][] = chunks.map(() => []);
  return {
    isNull: (r, c) => !chunks[c]![r.chunk]!.getValid(r.row),
    value(r, c) {
      const readers = scalar[c]!;
      const read = (readers[r.chunk] ??= valueReader(chunks[c]![r.chunk]!, types[c]!));
      return read(r.row);
    },
    elements(r, c) {
      const readers = elements[c]!;
      const read = (readers[r.chunk] ??= elementReader(chunks[c]![r.chunk]!, types[c]!, r.chunk));
      return read(r.row);
    },
  };
}

/** Reads the element (ARRAY) or entry (MAP) references of a row, with their identities. */
function elementReader(data: arrow.Data, type: DataType, chunk: number): (row: number) => ElementRef[] {
  const offsets = data.valueOffsets as Int32Array;
  const child = data.children[0]!;
  let idOf: (i: number) => string;
  if (type.root === 'MAP') {
    const readKey = valueReader(child.children[0]!, type.key);
    idOf = (i) => canonical(readKey(i));
  } else if (type.root === 'ARRAY') {
    const read = valueReader(child, type.element);
    idOf = (i) => canonical(read(i));
  } else {
    throw new TypeError(`column of type ${type.root} has no elements`);
  }
  return (row) => {
    const out: ElementRef[] = [];
    for (let i = offsets[row]!; i < offsets[row + 1]!; i++) out.push({ chunk, index: i, id: idOf(i) });
    return out;
  };
}

/** A stable string identity of a value (for distinct and map-key equality). */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'bigint') return `${x}n`;
    // Java's Float/Double equality: NaN equals NaN, -0.0 differs from 0.0 (JSON would merge them with null / 0).
    if (typeof x === 'number' && (Number.isNaN(x) || Object.is(x, -0))) return Number.isNaN(x) ? 'NaN' : '-0';
    if (x instanceof Uint8Array) return `0x${Buffer.from(x).toString('hex')}`;
    if (x !== null && typeof x === 'object' && typeof (x as { toJSON?: unknown }).toJSON === 'function') {
      return (x as { toJSON(): unknown }).toJSON();
    }
    return x;
  });
}

/**
 * Builds the Arrow column of aggregated `cells` for column `column`, whose input chunks are
 * `sources` (Arrow type `type`, Paimon type `paimonType`).
 */
export function buildAggregatedColumn(
  cells: readonly AggregatedCell[],
  column: number,
  sources: readonly arrow.Data[],
  type: arrow.DataType,
  paimonType: DataType,
  input: AggregationInput,
): arrow.Data {
  if (cells.every((c) => c === null || 'ref' in c)) return takeReferencedCells(cells, sources, type);
  const validity = validityOf(cells);
  if (paimonType.root === 'ARRAY' || paimonType.root === 'MAP') return nestedColumn(cells, column, sources, type, validity, input);
  const values: Value[] = cells.map((c) => (c === null ? null : 'ref' in c ? input.value(c.ref, column) : 'value' in c ? c.value : null));
  return scalarColumn(values, type, paimonType, validity);
}

/** Null count and validity bitmap (undefined when nothing is null) of a column's cells. */
interface Validity {
  readonly nullCount: number;
  readonly nullBitmap: Uint8Array | undefined;
}

function validityOf(cells: readonly AggregatedCell[]): Validity {
  const bitmap = new Uint8Array(((cells.length + 63) & ~63) >> 3);
  let nullCount = 0;
  cells.forEach((c, k) => {
    if (c === null) nullCount++;
    else bitmap[k >> 3]! |= 1 << (k & 7);
  });
  return { nullCount, nullBitmap: nullCount === 0 ? undefined : bitmap };
}

/** Every cell is an input value as it was (or null): taken from the input chunks, nulls from one extra all-null chunk. */
function takeReferencedCells(cells: readonly AggregatedCell[], sources: readonly arrow.Data[], type: arrow.DataType): arrow.Data {
  const n = cells.length;
  const all = [...sources, nullData(type, 1)];
  const chunks = new Uint32Array(n);
  const rows = new Uint32Array(n);
  cells.forEach((c, k) => {
    if (c === null) chunks[k] = sources.length;
    else if ('ref' in c) {
      chunks[k] = c.ref.chunk;
      rows[k] = c.ref.row;
    }
  });
  return takeChunks(all, { chunks, rows }, type);
}

/** ARRAY and MAP cells: offsets over the elements the cells name, taken from the input's child chunks. */
function nestedColumn(
  cells: readonly AggregatedCell[],
  column: number,
  sources: readonly arrow.Data[],
  type: arrow.DataType,
  { nullCount, nullBitmap }: Validity,
  input: AggregationInput,
): arrow.Data {
  const n = cells.length;
  const offsets = new Int32Array(n + 1);
  const childChunks: number[] = [];
  const childRows: number[] = [];
  cells.forEach((c, k) => {
    const els = c === null ? [] : 'ref' in c ? input.elements(c.ref, column) : 'elements' in c ? c.elements : [];
    for (const e of els) {
      childChunks.push(e.chunk);
      childRows.push(e.index);
    }
    offsets[k + 1] = offsets[k]! + els.length;
  });
  const child = takeChunks(
    sources.map((s) => s.children[0]!),
    { chunks: childChunks, rows: childRows },
    type.children[0]!.type as arrow.DataType,
  );
  return arrow.makeData({ type, length: n, nullCount, nullBitmap, valueOffsets: offsets, child } as never);
}

/** A column of scalar values of Paimon type `paimonType` (the types aggregate functions produce). */
function scalarColumn(values: readonly Value[], type: arrow.DataType, paimonType: DataType, validity: Validity): arrow.Data {
  const n = values.length;
  const { nullCount, nullBitmap } = validity;
  switch (paimonType.root) {
    case 'VARCHAR':
    case 'CHAR':
      return stringColumn(values, type, validity);
    case 'BOOLEAN': {
      const bits = new Uint8Array(((n + 63) & ~63) >> 3);
      values.forEach((v, k) => {
        if (v === true) bits[k >> 3]! |= 1 << (k & 7);
      });
      return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: bits } as never);
    }
    case 'DECIMAL':
      return decimalColumn(values, type, validity);
    case 'BIGINT': {
      const out = new BigInt64Array(n);
      values.forEach((v, k) => (out[k] = v === null ? 0n : (v as bigint)));
      return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: out } as never);
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'FLOAT':
    case 'DOUBLE': {
      const ArrayType = {
        TINYINT: Int8Array,
        SMALLINT: Int16Array,
        INT: Int32Array,
        FLOAT: Float32Array,
        DOUBLE: Float64Array,
      }[paimonType.root];
      const out = new ArrayType(n);
      values.forEach((v, k) => (out[k] = v === null ? 0 : (v as number)));
      return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: out } as never);
    }
    default:
      throw new TypeError(`cannot build an aggregated column of type ${paimonType.root}`);
  }
}

function stringColumn(values: readonly Value[], type: arrow.DataType, { nullCount, nullBitmap }: Validity): arrow.Data {
  const n = values.length;
  const encoder = new TextEncoder();
  const encoded = values.map((v) => (v === null ? new Uint8Array(0) : encoder.encode(v as string)));
  const offsets = new Int32Array(n + 1);
  encoded.forEach((b, k) => (offsets[k + 1] = offsets[k]! + b.length));
  const bytes = new Uint8Array(offsets[n]!);
  encoded.forEach((b, k) => bytes.set(b, offsets[k]!));
  return arrow.makeData({ type, length: n, nullCount, nullBitmap, valueOffsets: offsets, data: bytes } as never);
}

/** DECIMAL as 128-bit two's complement, four little-endian 32-bit words per value. */
function decimalColumn(values: readonly Value[], type: arrow.DataType, { nullCount, nullBitmap }: Validity): arrow.Data {
  const n = values.length;
  const words = new Uint32Array(n * 4);
  values.forEach((v, k) => {
    if (v === null) return;
    let x = BigInt.asUintN(128, (v as { unscaled: bigint }).unscaled);
    for (let w = 0; w < 4; w++) {
      words[k * 4 + w] = Number(x & 0xffffffffn);
      x >>= 32n;
    }
  });
  return arrow.makeData({ type, length: n, nullCount, nullBitmap, data: words } as never);
}
