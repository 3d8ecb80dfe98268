/**
 * Test helpers: Arrow rows of the ORC reader as the JSON the ORC project's tools print, and a
 * comparison with their expected `.jsn.gz` lines that keeps numbers exact (64-bit integers and
 * decimals are compared by their text, floats by value).
 */
import * as arrow from 'apache-arrow';

/** A number of the expected JSON, kept as its source text. */
interface NumText {
  readonly $n: string;
}

/** Parses one JSON line, turning every number token into `{ $n: text }`. */
export function parseExact(line: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += line[++i] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      continue;
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let j = i;
      while (j < line.length && /[-+0-9.eE]/.test(line[j]!)) j++;
      out += JSON.stringify({ $n: line.slice(i, j) });
      i = j - 1;
      continue;
    }
    out += ch;
  }
  return JSON.parse(out) as unknown;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

function dateText(days: number): string {
  const d = new Date(days * 86_400_000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** `yyyy-MM-dd HH:mm:ss.f…` as java.sql.Timestamp prints (fraction without trailing zeros, at least one digit). */
function timestampText(ns: bigint): string {
  const secs = ns >= 0n ? ns / 1_000_000_000n : -((-ns + 999_999_999n) / 1_000_000_000n);
  const frac = Number(ns - secs * 1_000_000_000n);
  const d = new Date(Number(secs) * 1000);
  const fraction = String(frac).padStart(9, '0').replace(/0+$/, '') || '0';
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${fraction}`;
}

function decimalText(words: Uint32Array, i: number, scale: number): string {
  let v = 0n;
  for (let k = 3; k >= 0; k--) v = (v << 32n) | BigInt(words[i * 4 + k]!);
  v = BigInt.asIntN(128, v);
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return (neg ? '-' : '') + text;
}

/** A leaf number with how to compare it. */
interface NumValue {
  readonly num: 'exact' | 'float32' | 'float64' | 'decimal';
  readonly value: string | number;
}

/** The JSON-like value of row `i` of `data` (numbers as {@link NumValue}). */
export function rowValue(data: arrow.Data, i: number): unknown {
  const t = data.type as arrow.DataType;
  if (arrow.DataType.isUnion(t)) {
    const typeId = data.typeIds[i]!;
    const child = data.children[typeId]!;
    if (arrow.DataType.isNull(child.type)) return null;
    return { tag: { num: 'exact', value: String(typeId) }, value: rowValue(child, data.valueOffsets[i]!) };
  }
  if (!data.getValid(i)) return null;
  const j = data.offset + i;
  if (arrow.DataType.isBool(t)) return ((data.values[j >> 3]! >> (j & 7)) & 1) === 1;
  if (arrow.DataType.isInt(t)) return { num: 'exact', value: String(data.values[j]) };
  if (arrow.DataType.isFloat(t))
    return { num: t.precision === arrow.Precision.SINGLE ? 'float32' : 'float64', value: data.values[j] as number };
  if (arrow.DataType.isDecimal(t)) return { num: 'decimal', value: decimalText(data.values as Uint32Array, j, t.scale) };
  if (arrow.DataType.isDate(t)) return dateText(data.values[j] as number);
  if (arrow.DataType.isTimestamp(t)) return timestampText(data.values[j] as bigint);
  if (arrow.DataType.isUtf8(t) || arrow.DataType.isBinary(t)) {
    const bytes = (data.values as Uint8Array).subarray(data.valueOffsets[j]!, data.valueOffsets[j + 1]!);
    return arrow.DataType.isUtf8(t) ? Buffer.from(bytes).toString('utf8') : Array.from(bytes, (b) => ({ num: 'exact', value: String(b) }));
  }
  if (arrow.DataType.isStruct(t)) {
    const out: Record<string, unknown> = {};
    t.children.forEach((f, k) => (out[f.name] = rowValue(data.children[k]!, j)));
    return out;
  }
  if (arrow.DataType.isList(t) || arrow.DataType.isMap(t)) {
    const child = data.children[0]!;
    const out: unknown[] = [];
    for (let k = data.valueOffsets[j]!; k < data.valueOffsets[j + 1]!; k++) out.push(rowValue(child, k));
    return out;
  }
  throw new Error(`no JSON form for Arrow type ${String(t)}`);
}

function normDecimal(text: string): string {
  let [int = '0', frac = ''] = text.replace(/^-/, '').split('.');
  int = int.replace(/^0+(?=\d)/, '');
  frac = frac.replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return body === '0' ? '0' : (text.startsWith('-') ? '-' : '') + body;
}

/** Compares an actual value with an expected one; returns a description of the first difference, or null. */
export function difference(actual: unknown, expected: unknown, path = '$'): string | null {
  if (expected !== null && typeof expected === 'object' && '$n' in (expected as object)) {
    const text = (expected as NumText).$n;
    const a = actual as NumValue | null;
    if (!a || typeof a !== 'object' || !('num' in a)) return `${path}: expected ${text}, got ${JSON.stringify(actual)}`;
    const ok =
      a.num === 'exact'
        ? a.value === text
        : a.num === 'decimal'
          ? normDecimal(a.value as string) === normDecimal(text)
          : // The expected files print floats with 7 and doubles with 14 significant digits.
            Number(text) === a.value || Number((a.value as number).toPrecision(a.num === 'float32' ? 7 : 14)) === Number(text);
    return ok ? null : `${path}: expected ${text}, got ${String(a.value)}`;
  }
  if (expected === null || typeof expected !== 'object') {
    return actual === expected ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}`;
    for (let k = 0; k < expected.length; k++) {
      const d = difference(actual[k], expected[k], `${path}[${k}]`);
      if (d) return d;
    }
    return null;
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
    return `${path}: expected an object, got ${JSON.stringify(actual)}`;
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  const keys = Object.keys(e);
  if (keys.join(',') !== Object.keys(a).join(',')) return `${path}: expected keys ${keys.join(',')}, got ${Object.keys(a).join(',')}`;
  for (const k of keys) {
    const d = difference(a[k], e[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}
