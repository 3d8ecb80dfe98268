/**
 * The rows of a decoded batch a predicate keeps. Conjuncts that test a column against literals
 * (`c = v`, `c IN (…)`) on integer, date and string columns run over the Arrow buffers without
 * decoding a value per row (a key lookup tests every row of the row groups it reads); the rest of
 * the predicate is evaluated row by row on the survivors, with SQL three-valued logic.
 */
import type * as arrow from 'apache-arrow';
import type { DataField } from '@tidemark/format';
import { evaluate, type Predicate } from '../predicate.js';
import { valueReader } from './arrow-values.js';

/**
 * The rows of `batch` (its columns are `fields`, in order) for which `predicate` is TRUE, ascending;
 * null when that is every row.
 */
export function matchingRows(batch: arrow.RecordBatch, fields: readonly DataField[], predicate: Predicate): number[] | null {
  const n = batch.numRows;
  const conjuncts = predicate.kind === 'and' ? predicate.children : [predicate];
  let rows: number[] | null = null;
  const rest: Predicate[] = [];
  for (const c of conjuncts) {
    const column = c.kind === 'compare' || c.kind === 'in' ? fields.findIndex((f) => f.name === c.column) : -1;
    const test = column < 0 ? null : literalTest(c, batch.data.children[column]!, fields[column]!);
    if (test === null) {
      rest.push(c);
      continue;
    }
    const kept: number[] = [];
    if (rows === null) {
      for (let i = 0; i < n; i++) if (test(i)) kept.push(i);
    } else for (const i of rows) if (test(i)) kept.push(i);
    rows = kept;
    if (rows.length === 0) return rows;
  }
  if (rest.length > 0) {
    const readers = new Map<string, (i: number) => unknown>();
    fields.forEach((f, i) => readers.set(f.name, valueReader(batch.data.children[i]!, f.type)));
    let row = 0;
    const get = (c: string): unknown => readers.get(c)?.(row) ?? null;
    const kept: number[] = [];
    const check = (i: number): void => {
      row = i;
      if (rest.every((p) => evaluate(p, get) === true)) kept.push(i);
    };
    if (rows === null) for (let i = 0; i < n; i++) check(i);
    else for (const i of rows) check(i);
    rows = kept;
  }
  return rows === null || rows.length === n ? null : rows;
}

/**
 * A test of row i for `c = v` / `c IN (…)` (not negated) straight on the column's buffers, or null
 * when the column type or the literals need the general evaluation. A NULL row never passes.
 */
function literalTest(p: Predicate, data: arrow.Data, field: DataField): ((i: number) => boolean) | null {
  let literals: readonly unknown[];
  if (p.kind === 'compare' && p.op === '=') literals = [p.value];
  else if (p.kind === 'in' && !p.negated) literals = p.values;
  else return null;
  const valid = data.nullCount === 0 ? null : (i: number): boolean => data.getValid(i);
  let test: ((i: number) => boolean) | null;
  switch (field.type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      test = integerTest(data.values as Int32Array, literals);
      break;
    case 'BIGINT':
      test = bigintTest(data.values as BigInt64Array, literals);
      break;
    case 'CHAR':
    case 'VARCHAR':
      test = stringTest(data, literals);
      break;
    default:
      return null;
  }
  if (test === null || valid === null) return test;
  const inner = test;
  return (i) => valid(i) && inner(i);
}

/** Integer literals as the numbers an integer column can hold (others can equal no row), or null for a literal of another kind. */
function integerLiterals(literals: readonly unknown[]): Set<number> | null {
  const out = new Set<number>();
  for (const v of literals) {
    if (v === null || v === undefined) continue;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number') return null;
    if (Number.isInteger(n) && (typeof v !== 'bigint' || BigInt(n) === v)) out.add(n);
  }
  return out;
}

function integerTest(values: ArrayLike<number>, literals: readonly unknown[]): ((i: number) => boolean) | null {
  const set = integerLiterals(literals);
  if (set === null) return null;
  if (set.size === 1) {
    const only = set.values().next().value!;
    return (i) => values[i] === only;
  }
  return (i) => set.has(values[i]!);
}

/** A BIGINT key list as 32-bit halves (low half → high halves), per list: a read tests every batch against the same list. */
const bigintHalvesByList = new WeakMap<readonly unknown[], Map<number, number[]> | null>();

function bigintLiteralHalves(literals: readonly unknown[]): Map<number, number[]> | null {
  if (bigintHalvesByList.has(literals)) return bigintHalvesByList.get(literals)!;
  let byLow: Map<number, number[]> | null = new Map();
  const set = new Set<bigint>();
  for (const v of literals) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'bigint') set.add(v);
    else if (typeof v === 'number' && Number.isSafeInteger(v)) set.add(BigInt(v));
    else if (typeof v !== 'number' || Number.isInteger(v)) {
      // an inexact double or another kind: leave it to compareValues
      byLow = null;
      break;
    }
  }
  if (byLow !== null) {
    for (const v of set) {
      const lo = Number(BigInt.asIntN(32, v));
      const hi = Number(BigInt.asIntN(32, v >> 32n));
      const list = byLow.get(lo);
      if (list === undefined) byLow.set(lo, [hi]);
      else list.push(hi);
    }
  }
  bigintHalvesByList.set(literals, byLow);
  return byLow;
}

function bigintTest(values: BigInt64Array, literals: readonly unknown[]): ((i: number) => boolean) | null {
  const byLow = bigintLiteralHalves(literals);
  if (byLow === null) return null;
  // Compare the two 32-bit halves: reading a BigInt64Array allocates a bigint per row.
  const halves = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
  if (byLow.size === 1) {
    const [lo, his] = byLow.entries().next().value!;
    if (his.length === 1) {
      const hi = his[0]!;
      return (i) => halves[2 * i] === lo && halves[2 * i + 1] === hi;
    }
  }
  return (i) => {
    const his = byLow.get(halves[2 * i]!);
    return his !== undefined && his.includes(halves[2 * i + 1]!);
  };
}

function stringTest(data: arrow.Data, literals: readonly unknown[]): ((i: number) => boolean) | null {
  const wanted = new Set<string>();
  const lengths = new Set<number>();
  const encoder = new TextEncoder();
  for (const v of literals) {
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string') return null;
    wanted.add(v);
    lengths.add(encoder.encode(v).length);
  }
  const offsets = data.valueOffsets as Int32Array;
  const bytes = data.values as Uint8Array;
  const decoder = new TextDecoder();
  // Only rows of a wanted byte length are decoded.
  return (i) => {
    const start = offsets[i]!;
    const end = offsets[i + 1]!;
    return lengths.has(end - start) && wanted.has(decoder.decode(bytes.subarray(start, end)));
  };
}

/** The sorted halves of a BIGINT key list, per list (a read searches every batch for the same keys). */
const halvesByList = new WeakMap<readonly unknown[], Array<[number, number]> | null>();

/**
 * `literals` as distinct BIGINT keys in ascending order, each as [signed high half, unsigned low
 * half] (signed 64-bit order without a bigint per probe); null for a literal that is no integer.
 */
function sortedBigintHalves(literals: readonly unknown[]): Array<[number, number]> | null {
  if (halvesByList.has(literals)) return halvesByList.get(literals)!;
  const keys: bigint[] = [];
  let out: Array<[number, number]> | null = null;
  let ok = true;
  for (const v of literals) {
    if (typeof v === 'bigint') keys.push(v);
    else if (typeof v === 'number' && Number.isSafeInteger(v)) keys.push(BigInt(v));
    else if (v !== null && v !== undefined && !(typeof v === 'number' && !Number.isInteger(v))) ok = false;
  }
  if (ok) {
    out = [...new Set(keys)]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((k): [number, number] => [Number(BigInt.asIntN(32, k >> 32n)), Number(BigInt.asUintN(32, k))]);
  }
  halvesByList.set(literals, out);
  return out;
}

/**
 * The rows whose BIGINT key (`halves`: little-endian 32-bit halves of `n` keys, ascending) is one
 * of `wanted` (ascending [high, low] halves): a binary search per wanted key from where the last
 * one ended, without a closure or a bigint per comparison (a 1,000-key list searches every bucket).
 */
function sortedBigintRows(halves: Int32Array, n: number, wanted: readonly [number, number][]): number[] {
  const out: number[] = [];
  let from = 0;
  for (let w = 0; w < wanted.length && from < n; w++) {
    const hi = wanted[w]![0];
    const lo = wanted[w]![1];
    let a = from;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      const h = halves[2 * mid + 1]!;
      if (h < hi || (h === hi && halves[2 * mid]! >>> 0 < lo)) a = mid + 1;
      else b = mid;
    }
    let i = a;
    while (i < n && halves[2 * i + 1] === hi && halves[2 * i]! >>> 0 === lo) out.push(i++);
    from = i;
  }
  return out;
}

/**
 * The rows of `batch` whose key equals one of `literals`, found by binary search in a batch
 * sorted by its key `field` (a single-column primary key: data files are sorted by key), in
 * ascending order; null when the key type is not searched here (the caller tests every row). Costs
 * O(literals × log rows) instead of a test of every row.
 */
export function sortedKeyRows(
  batch: arrow.RecordBatch,
  fields: readonly DataField[],
  field: DataField,
  literals: readonly unknown[],
): number[] | null {
  const column = fields.findIndex((f) => f.id === field.id);
  if (column < 0) return null;
  const data = batch.data.children[column]!;
  if (data.nullCount > 0) return null;
  const n = batch.numRows;
  // compare(i, k): sign of (row i's key − wanted key k).
  let wanted: readonly unknown[];
  let compare: (i: number, k: unknown) => number;
  switch (field.type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME': {
      const set = integerLiterals(literals);
      if (set === null) return null;
      const values = data.values as ArrayLike<number>;
      wanted = [...set].sort((a, b) => a - b);
      compare = (i, k) => values[i]! - (k as number);
      break;
    }
    case 'BIGINT': {
      const prepared = sortedBigintHalves(literals);
      if (prepared === null) return null;
      const values = data.values as BigInt64Array;
      return sortedBigintRows(new Int32Array(values.buffer, values.byteOffset, n * 2), n, prepared);
    }
    default:
      return null;
  }
  const out: number[] = [];
  let from = 0;
  for (const k of wanted) {
    // First row at or after `from` whose key is not below k.
    let lo = from;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(mid, k) < 0) lo = mid + 1;
      else hi = mid;
    }
    let i = lo;
    while (i < n && compare(i, k) === 0) out.push(i++);
    from = i;
  }
  return out;
}
