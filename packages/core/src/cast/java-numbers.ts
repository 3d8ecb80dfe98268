/**
 * Java's number semantics that Paimon's cast rules run on: `Double.toString` / `Float.toString`
 * (JDK 19+ shortest-decimal rule), `Double.parseDouble` / `Float.parseFloat`, the integer parsing of
 * Paimon's `BinaryStringUtils.toLong/toInt/toShort/toByte`, `new BigDecimal(String)`,
 * `Decimal.fromBigDecimal` (HALF_UP to the scale, null past the precision) and the primitive
 * narrowing conversions of the JLS (wrap-around for integers, saturation for float → integer).
 */
import type { Decimal } from '@tidemark/format';

/** A string a Java parser refuses (`NumberFormatException` in Java); the message is Java's reason. */
export class JavaNumberFormatError extends Error {}

const POW10_BIG: bigint[] = [1n];
function pow10(n: number): bigint {
  while (POW10_BIG.length <= n) POW10_BIG.push(POW10_BIG[POW10_BIG.length - 1]! * 10n);
  return POW10_BIG[n]!;
}

// ---------------------------------------------------------------------------------------------
// Double.toString / Float.toString
// ---------------------------------------------------------------------------------------------

/** `Double.toString(d)`: shortest decimal that round-trips, Java's layout (`1.0E10`, `0.001`, `-0.0`). */
export function javaDoubleToString(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (d === Infinity) return 'Infinity';
  if (d === -Infinity) return '-Infinity';
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  const [digits, exp] = doubleDigits(Math.abs(d));
  return (d < 0 ? '-' : '') + javaLayout(digits, exp);
}

/**
 * The decimal Java's `Double.toString` picks for a finite positive double, as `[digits without
 * trailing zeros, exponent of the first digit]`: the shortest that round-trips (JavaScript's
 * choice too), except that when one digit suffices Java takes the closest decimal of length 1 or 2
 * (4.9E-324, not 5.0E-324).
 */
function doubleDigits(abs: number): [string, number] {
  const [digits, exp] = shortestDigits(abs);
  if (digits.length === 1) {
    const two = abs.toExponential(1);
    if (Number(two) === abs) return splitExponential(two);
  }
  return [digits, exp];
}

/** JavaScript's shortest round-trip digits of a finite positive double, read off `String(x)`. */
function shortestDigits(x: number): [string, number] {
  const s = String(x);
  const e = s.indexOf('e');
  if (e >= 0) return splitExponential(s);
  const dot = s.indexOf('.');
  const intPart = dot < 0 ? s : s.slice(0, dot);
  const frac = dot < 0 ? '' : s.slice(dot + 1);
  if (intPart !== '0') {
    const all = (intPart + frac).replace(/0+$/, '');
    return [all, intPart.length - 1];
  }
  let z = 0;
  while (frac.charCodeAt(z) === 48) z++;
  return [frac.slice(z), -z - 1];
}

/** `Float.toString(f)` of a float32 value (`f` must be exactly representable as a float). */
export function javaFloatToString(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return 'Infinity';
  if (f === -Infinity) return '-Infinity';
  if (f === 0) return Object.is(f, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(f);
  let chosen: [string, number] | null = null;
  for (let p = 1; p <= 9 && chosen === null; p++) {
    const c = closestDecimal(abs, p);
    if (c !== null) {
      chosen = c;
      if (p === 1) {
        const two = closestDecimal(abs, 2);
        if (two !== null) chosen = two;
      }
    }
  }
  const [digits, exp] = chosen ?? splitExponential(abs.toExponential(8));
  return (f < 0 ? '-' : '') + javaLayout(digits, exp);
}

/**
 * The `p`-digit decimal closest to the float `x` (ties to the even significand) when it rounds back
 * to `x` as a float, as `[digits without trailing zeros, decimal exponent]`; else null.
 */
function closestDecimal(x: number, p: number): [string, number] | null {
  const { num, den } = exactRational(x);
  // x = num / den; find e with 10^(p-1) <= x / 10^(e-p+1) < 10^p.
  const e = decimalExponent(num, den);
  const shift = e - p + 1;
  const [sn, sd] = shift >= 0 ? [num, den * pow10(shift)] : [num * pow10(-shift), den];
  let n = sn / sd;
  const rem2 = (sn - n * sd) * 2n;
  if (rem2 > sd || (rem2 === sd && n % 2n === 1n)) n += 1n;
  const text = n.toString();
  if (javaParseFloat(`${text}e${shift}`) !== x) return null;
  const digits = text.replace(/0+$/, '') || '0';
  return [digits, shift + text.length - 1];
}

/** Floor of log10(num / den) for positive num, den. */
function decimalExponent(num: bigint, den: bigint): number {
  let e = num.toString().length - den.toString().length;
  // Correct the estimate by at most one step either way.
  const ge = (k: number): boolean => (k >= 0 ? num >= den * pow10(k) : num * pow10(-k) >= den);
  while (!ge(e)) e--;
  while (ge(e + 1)) e++;
  return e;
}

/** The exact value of a finite non-zero double as num / den (den a power of two). */
function exactRational(x: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let exp: number;
  if (expBits === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = expBits - 1075;
  }
  return exp >= 0 ? { num: mant << BigInt(exp), den: 1n } : { num: mant, den: 1n << BigInt(-exp) };
}

function splitExponential(s: string): [string, number] {
  const [mant, exp] = s.split('e') as [string, string];
  return [mant.replace('.', '').replace(/0+$/, '') || '0', Number(exp)];
}

/** Java's layout of digits `d1d2…` × 10^exp (one digit before the point): plain in [1e-3, 1e7), else `d.dddE±n`. */
function javaLayout(digits: string, exp: number): string {
  if (exp >= -3 && exp < 7) {
    if (exp < 0) return `0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.length > exp + 1 ? digits.slice(0, exp + 1) : digits.padEnd(exp + 1, '0');
    const frac = digits.length > exp + 1 ? digits.slice(exp + 1) : '0';
    return `${intPart}.${frac}`;
  }
  return `${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}E${exp}`;
}

// ---------------------------------------------------------------------------------------------
// Double.parseDouble / Float.parseFloat
// ---------------------------------------------------------------------------------------------

const DECIMAL_FLOAT = /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$/;
const HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)[fFdD]?$/;

/** Java's `String.trim()`: strips every char <= U+0020 at both ends. */
function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** `Double.parseDouble(s)`. @throws JavaNumberFormatError as Java does. */
export function javaParseDouble(s: string): number {
  const t = javaTrim(s);
  if (t === '') throw new JavaNumberFormatError(s === '' ? 'empty String' : `For input string: "${s}"`);
  if (DECIMAL_FLOAT.test(t)) {
    const body = t.replace(/[fFdD]$/, '');
    return Number(body);
  }
  const hex = HEX_FLOAT.exec(t);
  if (hex && (hex[2]! !== '' || (hex[3] ?? '') !== '')) return hexToBinary(hex, 53, -1074, 971);
  throw new JavaNumberFormatError(`For input string: "${s}"`);
}

/** `Float.parseFloat(s)`: rounded once, straight to float. @throws JavaNumberFormatError as Java does. */
export function javaParseFloat(s: string): number {
  const t = javaTrim(s);
  if (t === '') throw new JavaNumberFormatError(s === '' ? 'empty String' : `For input string: "${s}"`);
  if (DECIMAL_FLOAT.test(t)) {
    const body = t.replace(/[fFdD]$/, '');
    const d = Number(body);
    const f = Math.fround(d);
    if (!Number.isFinite(d) || d === f || !isFloatMidpoint(d)) return f;
    // The double lies exactly between two floats: decide on the exact decimal value.
    return decimalToBinary(body, 24, -149, 104);
  }
  const hex = HEX_FLOAT.exec(t);
  if (hex && (hex[2]! !== '' || (hex[3] ?? '') !== '')) return hexToBinary(hex, 24, -149, 104);
  throw new JavaNumberFormatError(`For input string: "${s}"`);
}

/** True when the double `d` is exactly halfway between two adjacent floats. */
function isFloatMidpoint(d: number): boolean {
  const lo = Math.fround(d);
  const other = lo < d ? nextFloatUp(lo) : nextFloatDown(lo);
  return (lo + other) / 2 === d;
}

function nextFloatUp(f: number): number {
  const b = new Float32Array([f]);
  const u = new Uint32Array(b.buffer);
  if (f === 0) u[0] = 1;
  else if (f > 0) u[0]!++;
  else u[0]!--;
  return b[0]!;
}

function nextFloatDown(f: number): number {
  return -nextFloatUp(-f);
}

/** Exact decimal text (no sign handling beyond a leading '-'/'+') rounded to a binary format. */
function decimalToBinary(text: string, mantBits: number, minExp: number, maxExp: number): number {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const digits = (m[2] ?? '') + (m[3] ?? '');
  const exp = Number(m[4] ?? '0') - (m[3] ?? '').length;
  const n = BigInt(digits === '' ? '0' : digits);
  const neg = m[1] === '-';
  if (n === 0n) return neg ? -0 : 0;
  const v =
    exp >= 0 ? roundToBinary(n * pow10(exp), 1n, mantBits, minExp, maxExp) : roundToBinary(n, pow10(-exp), mantBits, minExp, maxExp);
  return neg ? -v : v;
}

function hexToBinary(m: RegExpExecArray, mantBits: number, minExp: number, maxExp: number): number {
  const int = m[2] ?? '';
  const frac = m[3] ?? '';
  const n = BigInt(`0x${int + frac || '0'}`);
  const exp = Number(m[4]) - 4 * frac.length;
  const neg = m[1] === '-';
  if (n === 0n) return neg ? -0 : 0;
  const v =
    exp >= 0
      ? roundToBinary(n << BigInt(exp), 1n, mantBits, minExp, maxExp)
      : roundToBinary(n, 1n << BigInt(-exp), mantBits, minExp, maxExp);
  return neg ? -v : v;
}

/**
 * num / den (both positive) rounded to nearest-even with `mantBits` significant bits, exponents of
 * the last bit from `minExp` (subnormals) up to `maxExp` (beyond: Infinity).
 */
function roundToBinary(num: bigint, den: bigint, mantBits: number, minExp: number, maxExp: number): number {
  // e = exponent of the last significand bit: 2^(mantBits-1) <= num/den / 2^e < 2^mantBits.
  let e = num.toString(2).length - den.toString(2).length - mantBits + 1;
  const scaled = (k: number): [bigint, bigint] => (k >= 0 ? [num, den << BigInt(k)] : [num << BigInt(-k), den]);
  for (;;) {
    const [a, b] = scaled(e);
    const q = a / b;
    if (q >= 1n << BigInt(mantBits)) e++;
    else if (q < 1n << BigInt(mantBits - 1) && e > minExp) e--;
    else break;
  }
  if (e < minExp) e = minExp;
  const [a, b] = scaled(e);
  let q = a / b;
  const rem2 = (a - q * b) * 2n;
  if (rem2 > b || (rem2 === b && (q & 1n) === 1n)) q += 1n;
  if (q === 1n << BigInt(mantBits)) {
    q >>= 1n;
    e++;
  }
  if (e > maxExp) return Infinity;
  return Number(q) * 2 ** e;
}

// ---------------------------------------------------------------------------------------------
// Integer parsing (BinaryStringUtils) and primitive conversions
// ---------------------------------------------------------------------------------------------

const LIMITS = {
  8: [-128n, 127n],
  16: [-32768n, 32767n],
  32: [-2147483648n, 2147483647n],
  64: [-9223372036854775808n, 9223372036854775807n],
} as const;

/**
 * Paimon's `BinaryStringUtils.toLong` (bits 64), `toInt` (32), `toShort` (16), `toByte` (8): an
 * optional sign, ASCII digits, and an optional `.` followed by digits only (the fraction is
 * dropped); no whitespace; out of range is an error.
 */
export function javaParseIntegral(s: string, bits: 8 | 16 | 32 | 64): bigint {
  const fail = (reason: string): never => {
    throw new JavaNumberFormatError(`For input string: '${s}'. ${reason}`);
  };
  if (s.length === 0) fail('Input is empty.');
  let i = 0;
  const negative = s[0] === '-';
  if (negative || s[0] === '+') {
    i++;
    if (s.length === 1) fail('Input has only positive or negative symbol.');
  }
  let intEnd = s.length;
  for (let j = i; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x2e) {
      intEnd = j;
      break;
    }
    if (c < 0x30 || c > 0x39) fail('Invalid character found.');
  }
  for (let j = intEnd + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 0x30 || c > 0x39) fail('Invalid character found.');
  }
  const digits = s.slice(i, intEnd);
  let v = digits === '' ? 0n : BigInt(digits);
  if (negative) v = -v;
  // toShort/toByte parse as int first: an int overflow says so before the narrower range check.
  const [lo, hi] = LIMITS[bits === 64 ? 64 : 32];
  if (v < lo || v > hi) fail('Overflow.');
  const [lo2, hi2] = LIMITS[bits];
  if (v < lo2 || v > hi2) fail('Overflow.');
  return v;
}

/** Java's `(byte)`, `(short)`, `(int)` of an integer: two's-complement wrap-around. */
export function wrapInt(v: bigint | number, bits: 8 | 16 | 32): number {
  if (typeof v === 'bigint') return Number(BigInt.asIntN(bits, v));
  return bits === 32 ? v | 0 : bits === 16 ? (v << 16) >> 16 : (v << 24) >> 24;
}

/** Java's `(int) d` / `(long) d` of a double: truncated toward zero, NaN → 0, saturating. */
export function doubleToIntegral(d: number, bits: 32 | 64): bigint {
  if (Number.isNaN(d)) return 0n;
  const [lo, hi] = LIMITS[bits];
  if (d >= Number(hi)) return hi;
  if (d <= Number(lo)) return lo;
  return BigInt(Math.trunc(d));
}

/** Java's `(float) l` of a long: one rounding, straight to float. */
export function longToFloat(v: bigint): number {
  if (v >= -(1n << 53n) && v <= 1n << 53n) return Math.fround(Number(v));
  const neg = v < 0n;
  const r = roundToBinary(neg ? -v : v, 1n, 24, -149, 104);
  return neg ? -r : r;
}

// ---------------------------------------------------------------------------------------------
// BigDecimal and Paimon's Decimal
// ---------------------------------------------------------------------------------------------

/** An exact decimal: unscaled × 10^-scale (the scale may be negative, as in BigDecimal). */
export interface BigDecimalValue {
  readonly unscaled: bigint;
  readonly scale: number;
}

const BIG_DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** `new BigDecimal(s)`. @throws JavaNumberFormatError for text BigDecimal refuses (whitespace included). */
export function parseBigDecimal(s: string): BigDecimalValue {
  const m = BIG_DECIMAL.exec(s);
  const int = m?.[2] ?? '';
  const frac = m?.[3] ?? '';
  if (!m || (int === '' && frac === '')) {
    throw new JavaNumberFormatError(`'${s}' is not a valid BigDecimal`);
  }
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  const scale = frac.length - exp;
  if (!Number.isSafeInteger(exp) || scale > 2147483647 || scale < -2147483648) {
    throw new JavaNumberFormatError(`'${s}' is not a valid BigDecimal (exponent overflow)`);
  }
  const unscaled = BigInt(int + frac);
  return { unscaled: m[1] === '-' ? -unscaled : unscaled, scale };
}

/** `BigDecimal.setScale(scale, RoundingMode.HALF_UP)`: halves round away from zero. */
export function setScaleHalfUp(v: BigDecimalValue, scale: number): bigint {
  if (scale >= v.scale) return v.unscaled * pow10(scale - v.scale);
  const div = pow10(v.scale - scale);
  const neg = v.unscaled < 0n;
  const abs = neg ? -v.unscaled : v.unscaled;
  let q = abs / div;
  if ((abs - q * div) * 2n >= div) q += 1n;
  return neg ? -q : q;
}

/** Number of decimal digits of |n| (BigDecimal.precision(); 1 for zero). */
export function digitCount(n: bigint): number {
  return (n < 0n ? -n : n).toString().length;
}

/**
 * Paimon's `Decimal.fromBigDecimal(bd, precision, scale)`: HALF_UP to `scale`, then null when more
 * than `precision` digits remain.
 */
export function decimalFromBigDecimal(v: BigDecimalValue, precision: number, scale: number): Decimal | null {
  const unscaled = setScaleHalfUp(v, scale);
  if (digitCount(unscaled) > precision) return null;
  return { unscaled, scale };
}

/** `BigDecimal.valueOf(double)` = `new BigDecimal(Double.toString(d))`. @throws JavaNumberFormatError for NaN/±Infinity. */
export function bigDecimalOfDouble(d: number): BigDecimalValue {
  if (!Number.isFinite(d)) throw new JavaNumberFormatError(`Infinite or NaN: ${javaDoubleToString(d)}`);
  if (d === 0) return { unscaled: 0n, scale: 1 };
  // The value of the text Double.toString prints (its own scale does not matter to setScale).
  const [digits, exp] = doubleDigits(Math.abs(d));
  const unscaled = BigInt(digits);
  return { unscaled: d < 0 ? -unscaled : unscaled, scale: digits.length - 1 - exp };
}

/**
 * Paimon's `DecimalUtils.doubleValue`: for a compact decimal (type precision <= 18) the unscaled
 * long as a double divided by 10^scale, else BigDecimal's correctly rounded `doubleValue()`.
 */
export function decimalDoubleValue(d: Decimal, typePrecision: number): number {
  if (typePrecision <= 18) return Number(d.unscaled) / 10 ** d.scale;
  return Number(`${d.unscaled}e${-d.scale}`);
}

/** Paimon's `DecimalUtils.castToIntegral`: rounded toward zero, then the low 64 bits (`longValue()`). */
export function decimalToLong(d: Decimal): bigint {
  return BigInt.asIntN(64, d.unscaled / pow10(d.scale));
}
