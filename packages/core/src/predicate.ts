/**
 * Filter predicates over named columns: the model, SQL three-valued evaluation on a row, and
 * conservative pruning from column statistics (min / max / null count / row count).
 *
 * Literal values use the internal value representation of `@tidemark/format` (values.ts):
 * BOOLEAN boolean, TINYINT/SMALLINT/INT/FLOAT/DOUBLE number, BIGINT bigint,
 * DECIMAL `{ unscaled: bigint, scale: number }`, CHAR/VARCHAR string, BINARY/VARBINARY Uint8Array,
 * DATE epoch days (number), TIME millis of day (number), TIMESTAMP/TIMESTAMP_LTZ
 * `{ millis: number, nanoOfMillis: number }`. Build predicates with `parsePredicate`
 * (predicate-parser.ts) or the helpers below.
 */
import type { DataType } from '@tidemark/format';

/** Comparison operators. `!=` also stands for SQL `<>`. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** `column op value`; a `null` value makes the result unknown for every row (SQL `a = NULL`). */
export interface ComparePredicate {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly column: string;
  readonly type: DataType;
  readonly value: unknown;
}

/** `column [NOT] IN (v1, v2, …)`; values may contain null (SQL semantics: never TRUE for NOT IN then). */
export interface InPredicate {
  readonly kind: 'in';
  readonly column: string;
  readonly type: DataType;
  readonly values: readonly unknown[];
  readonly negated: boolean;
}

/** `column IS [NOT] NULL`. */
export interface IsNullPredicate {
  readonly kind: 'isNull';
  readonly column: string;
  readonly type: DataType;
  readonly negated: boolean;
}

/**
 * `column [NOT] LIKE pattern` on a string column: `%` matches any run of characters, `_` one
 * character (a code point), `escape` before either (or itself) makes it literal; case-sensitive.
 */
export interface LikePredicate {
  readonly kind: 'like';
  readonly column: string;
  readonly type: DataType;
  readonly pattern: string;
  /** The escape character (default backslash). */
  readonly escape: string;
  readonly negated: boolean;
}

/** All of `children` hold. */
export interface AndPredicate {
  readonly kind: 'and';
  readonly children: readonly Predicate[];
}

/** At least one of `children` holds. */
export interface OrPredicate {
  readonly kind: 'or';
  readonly children: readonly Predicate[];
}

/** `child` does not hold (SQL three-valued logic: NOT unknown is unknown). */
export interface NotPredicate {
  readonly kind: 'not';
  readonly child: Predicate;
}

/** A filter expression. Leaves name their column and carry its type (for comparing values). */
export type Predicate = ComparePredicate | InPredicate | IsNullPredicate | LikePredicate | AndPredicate | OrPredicate | NotPredicate;

/** Three-valued logic result: `null` is SQL UNKNOWN. */
export type Truth = boolean | null;

/** Reads a column value of the row being filtered; `null`/`undefined` mean SQL NULL. */
export type RowGetter = (column: string) => unknown;

// ---------------------------------------------------------------------------------------------
// Builders

/** AND of the given predicates (flattened; a single child is returned as is). */
export function and(...children: Predicate[]): Predicate {
  const flat: Predicate[] = [];
  for (const c of children) {
    if (c.kind === 'and') flat.push(...c.children);
    else flat.push(c);
  }
  if (flat.length === 0) throw new RangeError('and() needs at least one predicate');
  return flat.length === 1 ? flat[0]! : { kind: 'and', children: flat };
}

/** OR of the given predicates (flattened; a single child is returned as is). */
export function or(...children: Predicate[]): Predicate {
  const flat: Predicate[] = [];
  for (const c of children) {
    if (c.kind === 'or') flat.push(...c.children);
    else flat.push(c);
  }
  if (flat.length === 0) throw new RangeError('or() needs at least one predicate');
  return flat.length === 1 ? flat[0]! : { kind: 'or', children: flat };
}

/** NOT of a predicate. */
export function not(child: Predicate): Predicate {
  return { kind: 'not', child };
}

// ---------------------------------------------------------------------------------------------
// Value comparison

/** Compares two strings by Unicode code point, i.e. like Paimon's UTF-8 byte comparison. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // UTF-16 order differs from code-point order only when a surrogate meets U+E000..U+FFFF.
      return fixupSurrogate(x) - fixupSurrogate(y);
    }
  }
  return a.length - b.length;
}

function fixupSurrogate(c: number): number {
  if (c >= 0xd800 && c <= 0xdfff) return c + 0x2000;
  if (c >= 0xe000) return c - 0x800;
  return c;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

interface DecimalValue {
  readonly unscaled: bigint;
  readonly scale: number;
}

interface TimestampValue {
  readonly millis: number;
  readonly nanoOfMillis: number;
}

function compareDecimals(a: DecimalValue, b: DecimalValue): number {
  let x = a.unscaled;
  let y = b.unscaled;
  if (a.scale < b.scale) x *= 10n ** BigInt(b.scale - a.scale);
  else if (b.scale < a.scale) y *= 10n ** BigInt(a.scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

function sign(d: number): number {
  return d < 0 ? -1 : d > 0 ? 1 : 0;
}

/**
 * Compares two non-null values of the same logical type (decimals may differ in scale, numbers
 * may be mixed number/bigint). Returns a negative, zero or positive number; NaN for incomparable
 * values (e.g. a NaN double), which every comparison treats as "not satisfied".
 */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    // Mixed integer widths (e.g. stats of an evolved INT → BIGINT column).
    if (typeof a === 'number' && Number.isNaN(a)) return NaN;
    if (typeof b === 'number' && Number.isNaN(b)) return NaN;
    if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
      return a < b ? -1 : a > b ? 1 : 0;
    }
  }
  if (typeof a === 'string' && typeof b === 'string') return sign(compareStrings(a, b));
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return sign(compareBytes(a, b));
  if (isDecimal(a) && isDecimal(b)) return compareDecimals(a, b);
  if (isTimestamp(a) && isTimestamp(b)) {
    if (a.millis !== b.millis) return a.millis < b.millis ? -1 : 1;
    return sign(a.nanoOfMillis - b.nanoOfMillis);
  }
  throw new TypeError(`cannot compare values ${describe(a)} and ${describe(b)}`);
}

function isDecimal(v: unknown): v is DecimalValue {
  return typeof v === 'object' && v !== null && typeof (v as DecimalValue).unscaled === 'bigint';
}

function isTimestamp(v: unknown): v is TimestampValue {
  return typeof v === 'object' && v !== null && typeof (v as TimestampValue).millis === 'number';
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array)) {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  }
  return String(v);
}

function isNull(v: unknown): boolean {
  return v === null || v === undefined;
}

function applyOp(op: CompareOp, c: number): boolean {
  // NaN (incomparable) satisfies nothing, like Java's Double comparisons in SQL engines.
  if (Number.isNaN(c)) return false;
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/**
 * Evaluates a predicate on one row with SQL three-valued logic. `row` is either an object keyed
 * by column name or a getter. Returns `null` for UNKNOWN (a filter keeps a row only on `true`).
 */
export function evaluate(pred: Predicate, row: RowGetter | Readonly<Record<string, unknown>>): Truth {
  const get: RowGetter = typeof row === 'function' ? row : (c) => (Object.prototype.hasOwnProperty.call(row, c) ? row[c] : null);
  return evalWith(pred, get);
}

/** True when the row satisfies the predicate (UNKNOWN counts as not satisfied, as in WHERE). */
export function matches(pred: Predicate, row: RowGetter | Readonly<Record<string, unknown>>): boolean {
  return evaluate(pred, row) === true;
}

function evalWith(pred: Predicate, get: RowGetter): Truth {
  switch (pred.kind) {
    case 'compare': {
      const v = get(pred.column);
      if (isNull(v) || isNull(pred.value)) return null;
      return applyOp(pred.op, compareValues(v, pred.value));
    }
    case 'in': {
      const v = get(pred.column);
      if (isNull(v)) return null;
      const set = inSet(pred);
      let found: boolean;
      const key = set === null ? undefined : equalityKey(v);
      if (set !== null && key !== undefined && set.classes.has(key[0]!)) found = set.keys.has(key);
      else found = pred.values.some((item) => !isNull(item) && compareValues(v, item) === 0);
      const r: Truth = found ? true : (set?.sawNull ?? pred.values.some(isNull)) ? null : false;
      return pred.negated ? negate(r) : r;
    }
    case 'isNull': {
      const n = isNull(get(pred.column));
      return pred.negated ? !n : n;
    }
    case 'like': {
      const v = get(pred.column);
      if (isNull(v)) return null;
      const r = likeMatcher(pred.pattern, pred.escape).test(v as string);
      return pred.negated ? !r : r;
    }
    case 'and': {
      let unknown = false;
      for (const c of pred.children) {
        const r = evalWith(c, get);
        if (r === false) return false;
        if (r === null) unknown = true;
      }
      return unknown ? null : true;
    }
    case 'or': {
      let unknown = false;
      for (const c of pred.children) {
        const r = evalWith(c, get);
        if (r === true) return true;
        if (r === null) unknown = true;
      }
      return unknown ? null : false;
    }
    case 'not':
      return negate(evalWith(pred.child, get));
  }
}

const likeCache = new Map<string, { regexp: RegExp; prefix: string }>();

/** The parts of a LIKE pattern, compiled once per (pattern, escape). */
function compileLike(pattern: string, escape: string): { regexp: RegExp; prefix: string } {
  const key = `${escape}\u0000${pattern}`;
  let c = likeCache.get(key);
  if (c === undefined) {
    let source = '';
    let prefix = '';
    let literalSoFar = true;
    const chars = [...pattern];
    for (let i = 0; i < chars.length; i++) {
      let ch = chars[i]!;
      let literal = true;
      if (ch === escape) {
        if (i + 1 >= chars.length) throw new Error('it ends with the escape character; escape the escape to match it');
        ch = chars[++i]!;
      } else if (ch === '%' || ch === '_') literal = false;
      if (literal) {
        source += ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
        if (literalSoFar) prefix += ch;
      } else {
        source += ch === '%' ? '.*' : '.';
        literalSoFar = false;
      }
    }
    c = { regexp: new RegExp(`^${source}$`, 'su'), prefix };
    if (likeCache.size > 1000) likeCache.clear();
    likeCache.set(key, c);
  }
  return c;
}

/**
 * A RegExp matching the strings a LIKE `pattern` matches, whole (`%` any run, `_` one code point,
 * `escape` making the next character literal).
 *
 * @throws Error for a pattern ending with the escape character.
 */
export function likeMatcher(pattern: string, escape = '\\'): RegExp {
  return compileLike(pattern, escape).regexp;
}

function negate(t: Truth): Truth {
  return t === null ? null : !t;
}

/** IN lists shorter than this are scanned: hashing each row value costs more than a few compares. */
const IN_SET_MIN_VALUES = 8;

/** The values of a long IN list by {@link equalityKey}, built once per predicate object. */
interface InSet {
  readonly keys: ReadonlySet<string>;
  /** Kinds (first character of a key) among the values: a row value of another kind is compared one by one. */
  readonly classes: ReadonlySet<string>;
  readonly sawNull: boolean;
}

const inSets = new WeakMap<InPredicate, InSet | null>();

/**
 * The hash set of a long IN list, so that a row costs one lookup instead of one compare per value
 * (a delete of 5,000 keys tested every row against every key). Null for short lists and for
 * values {@link equalityKey} does not know (they are compared one by one).
 */
function inSet(pred: InPredicate): InSet | null {
  let set = inSets.get(pred);
  if (set === undefined) {
    set = null;
    if (pred.values.length >= IN_SET_MIN_VALUES) {
      const keys = new Set<string>();
      const classes = new Set<string>();
      let sawNull = false;
      let known = true;
      for (const item of pred.values) {
        if (isNull(item)) {
          sawNull = true;
          continue;
        }
        const key = equalityKey(item);
        if (key === undefined) {
          // NaN equals nothing; any other unknown value needs compareValues.
          if (typeof item === 'number') continue;
          known = false;
          break;
        }
        keys.add(key);
        classes.add(key[0]!);
      }
      if (known) set = { keys, classes, sawNull };
    }
    inSets.set(pred, set);
  }
  return set;
}

/**
 * A string that two non-null values share exactly when {@link compareValues} finds them equal
 * (same kind), or undefined for values it cannot key (NaN, nested values). Numbers and bigints
 * share integer keys (`5` = `5n`) and doubles one kind with them, -0 keys as 0, decimals are keyed without trailing zeros
 * (`1.50` = `1.5`).
 */
export function equalityKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'bigint':
      return `n${v}`;
    case 'number':
      // Integers print as their digits either way; other doubles always with '.', 'e' or 'Infinity'.
      if (Number.isNaN(v)) return undefined;
      return Number.isInteger(v) ? `n${BigInt(v)}` : `n${v}`;
    case 'string':
      return `s${v}`;
    case 'boolean':
      return v ? 'b1' : 'b0';
    default:
      break;
  }
  if (v instanceof Uint8Array) return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  if (isDecimal(v)) {
    let unscaled = v.unscaled;
    let scale = v.scale;
    if (unscaled === 0n) return 'd0';
    while (unscaled % 10n === 0n) {
      unscaled /= 10n;
      scale--;
    }
    return `d${unscaled}e${scale}`;
  }
  if (isTimestamp(v)) return `t${v.millis}.${v.nanoOfMillis}`;
  return undefined;
}

/**
 * Compiles a predicate for rows given as arrays in the order of `fieldNames` (faster than
 * {@link evaluate} for many rows). Throws when the predicate names a column not in `fieldNames`.
 */
export function bindPredicate(pred: Predicate, fieldNames: readonly string[]): (row: readonly unknown[]) => boolean {
  const index = new Map<string, number>();
  fieldNames.forEach((n, i) => index.set(n, i));
  for (const c of predicateColumns(pred)) {
    if (!index.has(c)) throw new RangeError(`predicate column '${c}' is not among the row's fields (${fieldNames.join(', ')})`);
  }
  return (row) => evalWith(pred, (c) => row[index.get(c)!]) === true;
}

/** The set of column names a predicate references. */
export function predicateColumns(pred: Predicate, into: Set<string> = new Set()): Set<string> {
  switch (pred.kind) {
    case 'and':
    case 'or':
      for (const c of pred.children) predicateColumns(c, into);
      break;
    case 'not':
      predicateColumns(pred.child, into);
      break;
    default:
      into.add(pred.column);
  }
  return into;
}

// ---------------------------------------------------------------------------------------------
// Partition extraction

/**
 * The part of `pred` usable for partition pruning: the AND of its top-level conjuncts that only
 * reference partition columns, or `null` when there is none. Rows matching `pred` always match
 * the result, so skipping partitions the result rejects is safe.
 */
export function partitionOnly(pred: Predicate, partitionKeys: readonly string[]): Predicate | null {
  const keys = new Set(partitionKeys);
  const conjuncts = pred.kind === 'and' ? pred.children : [pred];
  const kept = conjuncts.filter((c) => [...predicateColumns(c)].every((col) => keys.has(col)));
  return kept.length === 0 ? null : and(...kept);
}

// ---------------------------------------------------------------------------------------------
// Stats pruning

/**
 * Statistics of one column over a set of rows (a data file, a manifest's partitions …).
 * `undefined` or `null` members are unknown. Bounds may be loose (e.g. truncated strings), but
 * must hold: every non-null value v satisfies min ≤ v ≤ max.
 */
export interface ColumnStats {
  readonly min?: unknown;
  readonly max?: unknown;
  readonly nullCount?: number | bigint | null;
}

/** Statistics of a set of rows, per column. Columns without stats are treated as unknown. */
export interface PredicateStats {
  readonly rowCount?: number | bigint | null;
  readonly columns: Readonly<Record<string, ColumnStats | undefined>> | ((column: string) => ColumnStats | undefined);
}

/**
 * Builds {@link PredicateStats} from positional stats rows, e.g. a manifest entry's decoded
 * `_VALUE_STATS` (min row, max row, null counts) after mapping to the read schema's field names.
 * Missing rows or entries mean unknown.
 */
export function statsFromRows(
  fieldNames: readonly string[],
  minValues: readonly unknown[] | null | undefined,
  maxValues: readonly unknown[] | null | undefined,
  nullCounts: readonly (number | bigint | null | undefined)[] | null | undefined,
  rowCount: number | bigint | null | undefined,
): PredicateStats {
  const index = new Map<string, number>();
  fieldNames.forEach((n, i) => index.set(n, i));
  return {
    rowCount,
    columns: (column) => {
      const i = index.get(column);
      if (i === undefined) return undefined;
      return { min: minValues?.[i], max: maxValues?.[i], nullCount: nullCounts?.[i] };
    },
  };
}

/** Which truth values a predicate can take over the rows (over-approximated). */
interface Possible {
  readonly t: boolean;
  readonly f: boolean;
  readonly n: boolean;
}

const ANY: Possible = { t: true, f: true, n: true };

/**
 * Conservative pruning: returns false only when no row described by `stats` can satisfy `pred`
 * (SQL three-valued logic, so rows where the predicate is UNKNOWN do not count). Missing stats
 * never prune.
 */
export function mightMatch(pred: Predicate, stats: PredicateStats): boolean {
  const rowCount = toNum(stats.rowCount);
  if (rowCount === 0) return false;
  const lookup =
    typeof stats.columns === 'function'
      ? stats.columns
      : ((cols) => (c: string) => (Object.prototype.hasOwnProperty.call(cols, c) ? cols[c] : undefined))(stats.columns);
  return possible(pred, lookup, rowCount).t;
}

function toNum(v: number | bigint | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'bigint' ? Number(v) : v;
}

function possible(pred: Predicate, stats: (c: string) => ColumnStats | undefined, rowCount: number | null): Possible {
  switch (pred.kind) {
    case 'and': {
      const ps = pred.children.map((c) => possible(c, stats, rowCount));
      return {
        t: ps.every((p) => p.t),
        f: ps.some((p) => p.f),
        n: ps.some((p) => p.n) && ps.every((p) => p.t || p.n),
      };
    }
    case 'or': {
      const ps = pred.children.map((c) => possible(c, stats, rowCount));
      return {
        t: ps.some((p) => p.t),
        f: ps.every((p) => p.f),
        n: ps.some((p) => p.n) && ps.every((p) => p.f || p.n),
      };
    }
    case 'not': {
      const p = possible(pred.child, stats, rowCount);
      return { t: p.f, f: p.t, n: p.n };
    }
    default:
      return possibleLeaf(pred, stats(pred.column), rowCount);
  }
}

/** The non-null values of an IN list, once per predicate: planning tests each file's statistics against them. */
const nonNullByList = new WeakMap<InPredicate, readonly unknown[]>();

function nonNullValues(pred: InPredicate): readonly unknown[] {
  let vals = nonNullByList.get(pred);
  if (vals === undefined) nonNullByList.set(pred, (vals = pred.values.filter((v) => !isNull(v))));
  return vals;
}

function possibleLeaf(
  pred: ComparePredicate | InPredicate | IsNullPredicate | LikePredicate,
  s: ColumnStats | undefined,
  rowCount: number | null,
): Possible {
  const nullCount = toNum(s?.nullCount);
  // someNull / someNonNull: can the set contain a null / a non-null value?
  const someNull = nullCount === null || nullCount > 0;
  const someNonNull = nullCount === null || rowCount === null || nullCount < rowCount;

  if (pred.kind === 'isNull') {
    return pred.negated ? { t: someNonNull, f: someNull, n: false } : { t: someNull, f: someNonNull, n: false };
  }
  if (!someNonNull) return { t: false, f: false, n: someNull };

  const min = s?.min;
  const max = s?.max;
  const bounded = !isNull(min) && !isNull(max);
  let tf: { t: boolean; f: boolean };
  let n = someNull;

  try {
    if (pred.kind === 'compare') {
      if (isNull(pred.value)) return { t: false, f: false, n: true };
      tf = bounded ? compareRange(pred.op, min, max, pred.value) : { t: true, f: true };
    } else if (pred.kind === 'like') {
      // Only the literal prefix bounds the values: a match starts with it, so it lies in
      // [prefix, prefix + anything]; whether every row matches is never known from bounds.
      const prefix = compileLike(pred.pattern, pred.escape).prefix;
      const t =
        !bounded ||
        prefix === '' ||
        (compareStrings(max as string, prefix) >= 0 && (compareStrings(min as string, prefix) <= 0 || (min as string).startsWith(prefix)));
      tf = pred.negated ? { t: true, f: t } : { t, f: true };
    } else {
      const vals = nonNullValues(pred);
      const hasNull = vals.length < pred.values.length;
      let t: boolean;
      let f: boolean;
      if (bounded) {
        t = vals.some((v) => compareValues(min, v) <= 0 && compareValues(v, max) <= 0);
        f = !(compareValues(min, max) === 0 && vals.some((v) => compareValues(min, v) === 0));
      } else {
        t = vals.length > 0;
        f = true;
      }
      // x IN (…, NULL) is UNKNOWN instead of FALSE when nothing matches.
      if (hasNull && f) {
        f = false;
        n = true;
      }
      tf = pred.negated ? { t: f, f: t } : { t, f };
    }
  } catch {
    // Stats of an unexpected representation (e.g. after a type change): do not prune.
    return ANY;
  }
  return { t: tf.t, f: tf.f, n };
}

function compareRange(op: CompareOp, min: unknown, max: unknown, v: unknown): { t: boolean; f: boolean } {
  const cMin = compareValues(min, v); // sign of (min - v)
  const cMax = compareValues(max, v);
  if (Number.isNaN(cMin) || Number.isNaN(cMax)) return { t: true, f: true };
  switch (op) {
    case '=':
      return { t: cMin <= 0 && cMax >= 0, f: !(cMin === 0 && cMax === 0) };
    case '!=':
      return { t: !(cMin === 0 && cMax === 0), f: cMin <= 0 && cMax >= 0 };
    case '<':
      return { t: cMin < 0, f: cMax >= 0 };
    case '<=':
      return { t: cMin <= 0, f: cMax > 0 };
    case '>':
      return { t: cMax > 0, f: cMin <= 0 };
    case '>=':
      return { t: cMax >= 0, f: cMin < 0 };
  }
}
