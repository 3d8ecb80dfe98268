/**
 * BigInt-safe JSON for Paimon metadata files.
 *
 * Paimon's snapshot and tag files hold Java longs such as `commitIdentifier = 9223372036854775807`,
 * which `JSON.parse` silently rounds. {@link parseJson} keeps integers beyond ±(2^53-1) as `bigint`,
 * and {@link stringifyJackson} prints values exactly as Java's Jackson `DefaultPrettyPrinter` does,
 * so files we rewrite stay byte-identical to Java's.
 */
import { FormatError } from './errors.js';

/**
 * A number kept as its literal text, e.g. Jackson's `4.000000000` for a `Duration`. Produced by
 * {@link parseJson} for non-integral literals when `exactDecimals` is set; printed verbatim.
 */
export class JsonNumber {
  constructor(readonly text: string) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) {
      throw new FormatError(`invalid JSON number literal '${text}'`);
    }
  }
  toString(): string {
    return this.text;
  }
}

/** A JSON value as produced by {@link parseJson}. `undefined` members are skipped when printing. */
export type JsonValue = null | boolean | number | bigint | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue | undefined };

/** A parsed JSON object (values may be absent). */
export type JsonObject = { [key: string]: JsonValue | undefined };

/** Options of {@link parseJson}. */
export interface ParseJsonOptions {
  /** Return non-integral number literals as {@link JsonNumber} instead of `number` (exact text). */
  readonly exactDecimals?: boolean;
}

/**
 * Parses JSON text. Integer literals outside the safe integer range become `bigint`; all other
 * numbers become `number` (or {@link JsonNumber} for decimals with `exactDecimals`).
 *
 * @throws FormatError on malformed input, with the character offset.
 */
export function parseJson(text: string, options: ParseJsonOptions = {}): JsonValue {
  const p = new Parser(text, options.exactDecimals === true);
  p.ws();
  const v = p.value();
  p.ws();
  if (p.pos !== text.length) p.fail('unexpected trailing characters');
  return v;
}

class Parser {
  pos = 0;
  constructor(
    private readonly s: string,
    private readonly exactDecimals: boolean,
  ) {}

  fail(msg: string): never {
    throw new FormatError(`invalid JSON at offset ${this.pos}: ${msg}`);
  }

  ws(): void {
    const s = this.s;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  value(): JsonValue {
    const c = this.s[this.pos];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end of input' : `unexpected character '${c}'`);
    }
  }

  literal<T extends JsonValue>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.pos)) this.fail(`expected '${word}'`);
    this.pos += word.length;
    return v;
  }

  object(): JsonObject {
    this.pos++;
    // Null prototype so keys such as "__proto__" are ordinary members.
    const out: JsonObject = Object.create(null) as JsonObject;
    this.ws();
    if (this.s[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.pos] !== '"') this.fail('expected member name');
      const key = this.string();
      this.ws();
      if (this.s[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      this.ws();
      out[key] = this.value();
      this.ws();
      const c = this.s[this.pos++];
      if (c === '}') return out;
      if (c !== ',') {
        this.pos--;
        this.fail("expected ',' or '}'");
      }
    }
  }

  array(): JsonValue[] {
    this.pos++;
    const out: JsonValue[] = [];
    this.ws();
    if (this.s[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s[this.pos++];
      if (c === ']') return out;
      if (c !== ',') {
        this.pos--;
        this.fail("expected ',' or ']'");
      }
    }
  }

  string(): string {
    const s = this.s;
    this.pos++;
    let out = '';
    let start = this.pos;
    for (;;) {
      if (this.pos >= s.length) this.fail('unterminated string');
      const c = s.charCodeAt(this.pos);
      if (c === 0x22) {
        out += s.slice(start, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c === 0x5c) {
        out += s.slice(start, this.pos);
        const e = s[this.pos + 1];
        this.pos += 2;
        switch (e) {
          case '"':
          case '\\':
          case '/':
            out += e;
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const hex = s.slice(this.pos, this.pos + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
            out += String.fromCharCode(parseInt(hex, 16));
            this.pos += 4;
            break;
          }
          default:
            this.pos -= 2;
            this.fail('invalid escape');
        }
        start = this.pos;
      } else {
        this.pos++;
      }
    }
  }

  number(): number | bigint | JsonNumber {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.pos, this.pos + 400));
    if (m === null) this.fail('invalid number');
    const lit = m[0];
    this.pos += lit.length;
    if (m[2] === undefined && m[3] === undefined) {
      const n = Number(lit);
      return Number.isSafeInteger(n) ? n : BigInt(lit);
    }
    return this.exactDecimals ? new JsonNumber(lit) : Number(lit);
  }
}

/**
 * Prints a value the way Java's Jackson `ObjectMapper` with the default pretty printer does:
 * two-space object indentation, `"key" : value`, `{ }` / `[ ]` when empty, arrays inline as
 * `[ a, b ]` (so arrays of objects read `[ {` … `}, {` … `} ]`), no trailing newline.
 * `bigint` and integral `number`s print as bare integers (Java longs); other numbers as Java's
 * `Double.toString` would.
 * Object members whose value is `undefined` are omitted.
 */
export function stringifyJackson(value: JsonValue): string {
  const out: string[] = [];
  write(value, 0, out);
  return out.join('');
}

function write(v: JsonValue | undefined, depth: number, out: string[]): void {
  if (v === null || v === undefined) {
    out.push('null');
  } else if (typeof v === 'boolean') {
    out.push(v ? 'true' : 'false');
  } else if (typeof v === 'bigint') {
    out.push(v.toString());
  } else if (typeof v === 'number') {
    out.push(jacksonNumber(v));
  } else if (typeof v === 'string') {
    out.push(jacksonString(v));
  } else if (v instanceof JsonNumber) {
    out.push(v.text);
  } else if (Array.isArray(v)) {
    if (v.length === 0) {
      out.push('[ ]');
      return;
    }
    out.push('[ ');
    v.forEach((item, i) => {
      if (i > 0) out.push(', ');
      write(item, depth, out);
    });
    out.push(' ]');
  } else {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    if (keys.length === 0) {
      out.push('{ }');
      return;
    }
    out.push('{');
    const indent = '\n' + '  '.repeat(depth + 1);
    keys.forEach((k, i) => {
      out.push(i > 0 ? ',' + indent : indent, jacksonString(k), ' : ');
      write(v[k], depth + 1, out);
    });
    out.push('\n' + '  '.repeat(depth) + '}');
  }
}

function jacksonNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER && !Object.is(n, -0)) {
    return String(n);
  }
  if (!Number.isFinite(n)) {
    // Jackson writes non-finite doubles as quoted strings by default (QUOTE_NON_NUMERIC_NUMBERS).
    return `"${javaDoubleToString(n)}"`;
  }
  return javaDoubleToString(n);
}

const HEX = '0123456789ABCDEF';

/** Jackson escapes only `"`, `\` and control characters (short forms where JSON has them). */
function jacksonString(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(start, i);
    start = i + 1;
    switch (c) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x09:
        out += '\\t';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0d:
        out += '\\r';
        break;
      default:
        out += '\\u00' + HEX[c >> 4] + HEX[c & 15];
    }
  }
  return out + s.slice(start) + '"';
}

/**
 * Java's `Double.toString(d)`: plain notation with at least one fraction digit for
 * 1e-3 ≤ |d| < 1e7, otherwise `d.dddE±n` (e.g. `1.0E10`, `1.5E-4`). Uses the shortest
 * round-tripping digits, as JDK 19+ does.
 */
export function javaDoubleToString(d: number): string {
  return javaFloatingToString(
    d,
    shortestDigits(d, 17, (x) => x),
  );
}

/** Java's `Float.toString(f)` for a value representable as float32 (digits shortest for float32). */
export function javaFloatToString(f: number): string {
  const v = Math.fround(f);
  return javaFloatingToString(v, shortestDigits(v, 9, Math.fround));
}

/** Shortest decimal digits and exponent that round-trip `v` under `round`. */
function shortestDigits(v: number, maxPrecision: number, round: (x: number) => number): { digits: string; exp: number } {
  const a = Math.abs(v);
  for (let p = 1; p <= maxPrecision; p++) {
    const s = a.toExponential(p - 1);
    if (round(Number(s)) === a || p === maxPrecision) {
      const [mant = '', e = '0'] = s.split('e');
      return { digits: mant.replace('.', '').replace(/0+$/, '') || '0', exp: Number(e) };
    }
  }
  /* c8 ignore next */
  throw new Error('unreachable');
}

function javaFloatingToString(v: number, sd: { digits: string; exp: number }): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  if (v === 0) return sign + '0.0';
  const a = Math.abs(v);
  const { digits, exp } = sd;
  if (a >= 1e-3 && a < 1e7) {
    if (exp >= 0) {
      const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1) || '0';
      return `${sign}${intPart}.${frac}`;
    }
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exp}`;
}
