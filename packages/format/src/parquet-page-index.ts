/**
 * Parquet page indexes (parquet-format's PageIndex.md): a column chunk's offset index (where each
 * data page is and its first row) and column index (each page's min, max and null count). A
 * reader that knows which rows it wants reads only the pages holding them, instead of whole
 * column chunks: what a key lookup in a large row group needs.
 */
import type { SchemaElement } from 'hyparquet';
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';

import { decodeStat, type ParquetStatValue } from './parquet-footer.js';

/** Where one data page of a column chunk is, and the rows it holds. */
export interface ParquetPageLocation {
  /** File offset of the page (its header). */
  readonly offset: number;
  /** Bytes of the page, header included. */
  readonly size: number;
  /** Row of the row group the page starts with. */
  readonly firstRow: number;
}

/** One page's statistics from the column index. */
export interface ParquetPageStats {
  /** The page holds nulls only (then it has no bounds). */
  readonly nullPage: boolean;
  readonly nullCount?: bigint;
  readonly min?: ParquetStatValue;
  readonly max?: ParquetStatValue;
}

/** The pages of one column chunk of one row group. */
export interface ParquetColumnPages {
  /** Column (top-level name) the pages belong to. */
  readonly column: string;
  /** The column's schema element (type, logical type): how to read its bounds. */
  readonly element: SchemaElement;
  /** Rows of the row group. */
  readonly rows: number;
  readonly pages: readonly ParquetPageLocation[];
  /** Page statistics in page order, or null when the file has no column index for the chunk. */
  readonly stats: readonly ParquetPageStats[] | null;
  /** The bytes before the first data page (the dictionary page), or null when there are none. */
  readonly dictionary: { readonly offset: number; readonly size: number } | null;
}

interface RawPageLocation {
  field_1: bigint;
  field_2: number;
  field_3: bigint;
}

/** Decodes an offset index (Thrift `OffsetIndex`). */
export function decodeOffsetIndex(bytes: Uint8Array): ParquetPageLocation[] {
  const raw = deserializeTCompactProtocol({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }) as {
    field_1?: RawPageLocation[];
  };
  return (raw.field_1 ?? []).map((p) => ({ offset: Number(p.field_1), size: p.field_2, firstRow: Number(p.field_3) }));
}

/** Decodes a column index (Thrift `ColumnIndex`) of a column described by `element`. */
export function decodeColumnIndex(bytes: Uint8Array, element: SchemaElement): ParquetPageStats[] {
  const raw = deserializeTCompactProtocol({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }) as {
    field_1?: boolean[];
    field_2?: Uint8Array[];
    field_3?: Uint8Array[];
    field_5?: bigint[];
  };
  const nullPages = raw.field_1 ?? [];
  return nullPages.map((nullPage, i) => {
    const min = raw.field_2?.[i];
    const max = raw.field_3?.[i];
    const nulls = raw.field_5?.[i];
    return {
      nullPage,
      ...(nulls !== undefined ? { nullCount: BigInt(nulls) } : {}),
      ...(!nullPage && min !== undefined ? { min: decodeStat(min, element) } : {}),
      ...(!nullPage && max !== undefined ? { max: decodeStat(max, element) } : {}),
    };
  });
}
