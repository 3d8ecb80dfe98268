/**
 * Per-file value statistics (`_VALUE_STATS`, `_VALUE_STATS_COLS`) as Paimon writes them for append
 * tables, honouring `metadata.stats-mode`, `fields.<col>.stats-mode` and
 * `metadata.stats-dense-store`.
 *
 * Min/max are found on the Arrow buffers (strings and binaries compared as unsigned bytes, like
 * Paimon's BinaryString/byte[] order); NaN is ignored; nested columns get null bounds.
 */
import * as arrow from 'apache-arrow';
import { deserializeBinaryRow, serializeBinaryRow, type DataField, type DataType, type SimpleStats, type Value } from '@tidemark/format';
import type { CoreOptions, StatsMode } from '../core-options.js';
import { compareValues } from '../predicate.js';
import { valueReader } from '../read/arrow-values.js';
import { isValidAt } from './arrow-columns.js';

/** Running min, max and null count of one column while a file is written (min/max null = unknown). */
interface StatsAccumulator {
  min: Value;
  max: Value;
  nullCount: number;
}

/** The `_VALUE_STATS` of a file and the columns they cover (`null` = all columns). */
export interface FileValueStats {
  readonly valueStats: SimpleStats;
  readonly valueStatsCols: readonly string[] | null;
}

/** Accumulates column statistics over the batches of one data file. */
export class FileStatsCollector {
  private readonly modes: StatsMode[];
  private readonly stats: StatsAccumulator[];

  constructor(
    private readonly fields: readonly DataField[],
    private readonly options: Pick<CoreOptions, 'statsModeOf' | 'statsDenseStore'>,
  ) {
    this.modes = fields.map((f) => options.statsModeOf(f.name));
    this.stats = fields.map(() => ({ min: null, max: null, nullCount: 0 }));
  }

  /** Adds a batch whose columns are in schema order and typed by the shared mapping. */
  add(batch: arrow.RecordBatch): void {
    this.fields.forEach((field, c) => {
      const mode = this.modes[c]!;
      if (mode.kind === 'none') return;
      const data = batch.data.children[c]!;
      const acc = this.stats[c]!;
      acc.nullCount += data.nullCount;
      if (mode.kind === 'counts') return;
      const found = minMaxIndices(data, field.type);
      if (!found) return;
      const read = valueReader(data, field.type);
      const lo = read(found[0]);
      const hi = read(found[1]);
      if (acc.min === null || (lo !== null && compareValues(lo, acc.min) < 0)) acc.min = lo;
      if (acc.max === null || (hi !== null && compareValues(hi, acc.max) > 0)) acc.max = hi;
    });
  }

  /**
   * Why the statistics of a data file cannot stand in for its rows in {@link addFileStats}, or
   * null when they can. They must have been collected with this collector's fields and stats modes
   * (the caller checks the file's schema id: the modes are table options) and cover the same
   * columns, with a null count per counted column, and bounds for every column whose rows have
   * bounds: a file's null bounds of a string column with values mean its `truncate(n)` bound
   * could not be formed, which its rows would not tell apart from a bound of another file.
   */
  fileStatsBlocker(file: {
    readonly rowCount: number;
    readonly valueStats: SimpleStats;
    readonly valueStatsCols: readonly string[] | null;
  }): string | null {
    const keep = this.keptColumns();
    const cols = file.valueStatsCols ?? this.fields.map((f) => f.name);
    if (cols.length !== keep.length || keep.some((c, k) => this.fields[c]!.name !== cols[k])) {
      return `its statistics cover the columns ${cols.join(', ')}, not ${keep.map((c) => this.fields[c]!.name).join(', ')}`;
    }
    const { nullCounts } = file.valueStats;
    const { mins, maxs } = this.fileBounds(file.valueStats, keep);
    for (const [k, c] of keep.entries()) {
      const mode = this.modes[c]!;
      if (mode.kind === 'none') continue;
      const nulls = nullCounts?.[k];
      const name = this.fields[c]!.name;
      if (nulls === null || nulls === undefined) return `it has no null count of column ${name}`;
      if (mode.kind === 'counts' || nulls >= file.rowCount || !hasBounds(this.fields[c]!.type)) continue;
      // Floats: all values NaN, which have no bounds in the rows either.
      if ((mins[k] === null || maxs[k] === null) && !isFloat(this.fields[c]!.type)) return `it has no bounds of column ${name}`;
    }
    return null;
  }

  /**
   * Adds a data file's statistics as if its rows were added (null counts add up, bounds merge);
   * see {@link fileStatsBlocker} for the files whose statistics qualify. Bounds truncated by
   * `truncate(n)` merge into what the rows give: a prefix keeps the order of the strings it
   * shortens, and truncating again in {@link result} changes nothing.
   */
  addFileStats(file: {
    readonly rowCount: number;
    readonly valueStats: SimpleStats;
    readonly valueStatsCols: readonly string[] | null;
  }): void {
    const blocker = this.fileStatsBlocker(file);
    if (blocker !== null) throw new Error(`FileStatsCollector.addFileStats: ${blocker}`);
    const keep = this.keptColumns();
    const { mins, maxs } = this.fileBounds(file.valueStats, keep);
    for (const [k, c] of keep.entries()) {
      const mode = this.modes[c]!;
      if (mode.kind === 'none') continue;
      const acc = this.stats[c]!;
      acc.nullCount += file.valueStats.nullCounts![k]!;
      if (mode.kind === 'counts') continue;
      const lo = mins[k]!;
      const hi = maxs[k]!;
      if (lo !== null && (acc.min === null || compareValues(lo, acc.min) < 0)) acc.min = lo;
      if (hi !== null && (acc.max === null || compareValues(hi, acc.max) > 0)) acc.max = hi;
    }
  }

  /** A file's min and max BinaryRows, decoded as the `keep` columns. */
  private fileBounds(stats: SimpleStats, keep: readonly number[]): { mins: Value[]; maxs: Value[] } {
    const types = keep.map((c) => this.fields[c]!.type);
    return { mins: deserializeBinaryRow(stats.minValues, types), maxs: deserializeBinaryRow(stats.maxValues, types) };
  }

  /** Columns whose statistics are stored: all, less the `none` ones when dense-storing. */
  private keptColumns(): number[] {
    const keep: number[] = [];
    this.fields.forEach((_f, c) => {
      if (this.modes[c]!.kind !== 'none' || !this.options.statsDenseStore) keep.push(c);
    });
    return keep;
  }

  /** The SimpleStats BinaryRows (schema order, or the kept columns when dense-storing `none` columns). */
  result(): FileValueStats {
    const keep: number[] = [];
    const mins: Value[] = [];
    const maxs: Value[] = [];
    const counts: (number | null)[] = [];
    this.fields.forEach((field, c) => {
      const mode = this.modes[c]!;
      if (mode.kind === 'none' && this.options.statsDenseStore) return;
      keep.push(c);
      const s = this.stats[c]!;
      if (mode.kind === 'none') {
        mins.push(null);
        maxs.push(null);
        counts.push(null);
        return;
      }
      counts.push(s.nullCount);
      if (mode.kind === 'counts') {
        mins.push(null);
        maxs.push(null);
        return;
      }
      if (mode.kind === 'truncate') {
        const t = truncateBounds(field.type, s.min, s.max, mode.length);
        mins.push(t.min);
        maxs.push(t.max);
        return;
      }
      mins.push(s.min);
      maxs.push(s.max);
    });
    const types = keep.map((c) => this.fields[c]!.type);
    return {
      valueStats: { minValues: serializeBinaryRow(types, mins), maxValues: serializeBinaryRow(types, maxs), nullCounts: counts },
      valueStatsCols: keep.length === this.fields.length ? null : keep.map((c) => this.fields[c]!.name),
    };
  }
}

/**
 * Paimon's truncate(n) for strings (code points) and binaries (bytes): min = prefix, max = prefix
 * with its last unit incremented; both null when no upper bound can be formed. Other types keep
 * exact bounds.
 */
export function truncateBounds(type: DataType, min: Value, max: Value, length: number): { min: Value; max: Value } {
  if (type.root === 'CHAR' || type.root === 'VARCHAR') {
    const lo = typeof min === 'string' ? truncateStringMin(min, length) : min;
    const hi = typeof max === 'string' ? truncateStringMax(max, length) : max;
    return hi === undefined ? { min: null, max: null } : { min: lo, max: hi };
  }
  if (type.root === 'BINARY' || type.root === 'VARBINARY') {
    const lo = min instanceof Uint8Array && min.length > length ? min.slice(0, length) : min;
    let hi: Value | undefined = max;
    if (max instanceof Uint8Array && max.length > length) {
      hi = undefined;
      for (let i = length - 1; i >= 0; i--) {
        if (max[i]! < 0xff) {
          const out = max.slice(0, i + 1);
          out[i]!++;
          hi = out;
          break;
        }
      }
    }
    return hi === undefined ? { min: null, max: null } : { min: lo, max: hi };
  }
  return { min, max };
}

function truncateStringMin(s: string, n: number): string {
  if (s.length <= n) return s;
  const cps = Array.from(s);
  return cps.length <= n ? s : cps.slice(0, n).join('');
}

/** Undefined when no upper bound exists (every code point of the prefix is U+10FFFF). */
function truncateStringMax(s: string, n: number): string | undefined {
  if (s.length <= n) return s;
  const cps = Array.from(s);
  if (cps.length <= n) return s;
  for (let i = n - 1; i >= 0; i--) {
    let next = cps[i]!.codePointAt(0)! + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return cps.slice(0, i).join('') + String.fromCodePoint(next);
  }
  return undefined;
}

/**
 * Unsigned byte order of `bytes[aStart, aEnd)` and `bytes[bStart, bEnd)`, four bytes per step
 * (big-endian words compare like their bytes).
 */
function compareRanges(bytes: Uint8Array, view: DataView, aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  const aLength = aEnd - aStart;
  const bLength = bEnd - bStart;
  const n = aLength < bLength ? aLength : bLength;
  let k = 0;
  for (; k + 4 <= n; k += 4) {
    const x = view.getUint32(aStart + k);
    const y = view.getUint32(bStart + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  for (; k < n; k++) {
    const d = bytes[aStart + k]! - bytes[bStart + k]!;
    if (d !== 0) return d;
  }
  return aLength - bLength;
}

/** Row indices of the smallest and largest non-null value of a column, or undefined (all null / nested / all NaN). */
function minMaxIndices(data: arrow.Data, type: DataType): [number, number] | undefined {
  const n = data.length;
  const noNulls = data.nullCount === 0;
  let lo = -1;
  let hi = -1;
  switch (type.root) {
    case 'BOOLEAN': {
      let t = -1;
      let f = -1;
      for (let i = 0; i < n && (t < 0 || f < 0); i++) {
        if (!noNulls && !isValidAt(data, i)) continue;
        const b = data.offset + i;
        if ((data.values[b >> 3]! >> (b & 7)) & 1) t = t < 0 ? i : t;
        else f = f < 0 ? i : f;
      }
      if (t < 0 && f < 0) return undefined;
      return [f >= 0 ? f : t, t >= 0 ? t : f];
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
    case 'FLOAT':
    case 'DOUBLE':
    case 'BIGINT':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      if (data.values instanceof BigInt64Array) {
        // BIGINT and timestamps: compared as 32-bit halves, since reading a BigInt64Array element
        // allocates a BigInt (most of this function's time on a million rows).
        const v = data.values;
        const w = new Int32Array(v.buffer, v.byteOffset, v.length * 2);
        for (let i = 0; i < n; i++) {
          if (!noNulls && !isValidAt(data, i)) continue;
          if (lo < 0 || compareInt64(w, i, lo) < 0) lo = i;
          if (hi < 0 || compareInt64(w, i, hi) > 0) hi = i;
        }
        break;
      }
      // Numbers, or bigints (BIGINT and timestamps, which are never NaN); mn/mx are only read once set.
      const v = data.values as ArrayLike<number | bigint>;
      let mn: number | bigint = 0;
      let mx: number | bigint = 0;
      for (let i = 0; i < n; i++) {
        const x = v[i]!;
        if (x !== x || (!noNulls && !isValidAt(data, i))) continue;
        if (lo < 0 || x < mn) {
          mn = x;
          lo = i;
        }
        if (hi < 0 || x > mx) {
          mx = x;
          hi = i;
        }
      }
      break;
    }
    case 'DECIMAL': {
      const w = data.values as Uint32Array;
      for (let i = 0; i < n; i++) {
        if (!noNulls && !isValidAt(data, i)) continue;
        if (lo < 0 || compareInt128(w, i, lo) < 0) lo = i;
        if (hi < 0 || compareInt128(w, i, hi) > 0) hi = i;
      }
      break;
    }
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY': {
      return byteStringMinMax(data, noNulls);
    }
    default:
      return undefined;
  }
  return lo < 0 ? undefined : [lo, hi];
}

/**
 * {@link minMaxIndices} of a string or binary column, in a function of its own so that the JIT
 * optimises this loop for these arrays alone.
 */
function byteStringMinMax(data: arrow.Data, noNulls: boolean): [number, number] | undefined {
  const n = data.length;
  let lo = -1;
  let hi = -1;
  const off = data.valueOffsets as Int32Array;
  const bytes = data.values as Uint8Array;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The bounds' byte ranges are kept in locals, and a value at or below the minimum is never
  // compared with the maximum: this loop is most of a large write's main-thread time.
  let loStart = 0;
  let loEnd = 0;
  let hiStart = 0;
  let hiEnd = 0;
  for (let i = 0; i < n; i++) {
    if (!noNulls && !isValidAt(data, i)) continue;
    const start = off[i]!;
    const end = off[i + 1]!;
    if (lo < 0) {
      lo = hi = i;
      loStart = hiStart = start;
      loEnd = hiEnd = end;
      continue;
    }
    const c = compareRanges(bytes, view, start, end, loStart, loEnd);
    if (c < 0) {
      lo = i;
      loStart = start;
      loEnd = end;
    } else if (c > 0 && compareRanges(bytes, view, start, end, hiStart, hiEnd) > 0) {
      hi = i;
      hiStart = start;
      hiEnd = end;
    }
  }
  return lo < 0 ? undefined : [lo, hi];
}

/** Compares the i-th and j-th little-endian int64 of `w` (two int32 words each). */
function compareInt64(w: Int32Array, i: number, j: number): number {
  const a = w[2 * i + 1]!;
  const b = w[2 * j + 1]!;
  if (a !== b) return a - b;
  return (w[2 * i]! >>> 0) - (w[2 * j]! >>> 0);
}

function compareInt128(w: Uint32Array, i: number, j: number): number {
  const a = w[4 * i + 3]! | 0;
  const b = w[4 * j + 3]! | 0;
  if (a !== b) return a - b;
  for (let k = 2; k >= 0; k--) {
    const x = w[4 * i + k]!;
    const y = w[4 * j + k]!;
    if (x !== y) return x - y;
  }
  return 0;
}

/** Whether {@link minMaxIndices} finds bounds for a column of this type (nested columns have none). */
function hasBounds(type: DataType): boolean {
  return BOUNDED_ROOTS.has(type.root);
}

/** The types {@link minMaxIndices} handles. */
const BOUNDED_ROOTS: ReadonlySet<string> = new Set([
  'BOOLEAN',
  'TINYINT',
  'SMALLINT',
  'INT',
  'DATE',
  'TIME',
  'FLOAT',
  'DOUBLE',
  'BIGINT',
  'TIMESTAMP',
  'TIMESTAMP_LTZ',
  'DECIMAL',
  'CHAR',
  'VARCHAR',
  'BINARY',
  'VARBINARY',
]);

function isFloat(type: DataType): boolean {
  return type.root === 'FLOAT' || type.root === 'DOUBLE';
}
