/**
 * Parser for the small SQL-like WHERE language of `--where` and `newRead({ where })`:
 *
 *   expr      := orExpr
 *   orExpr    := andExpr (OR andExpr)*
 *   andExpr   := notExpr (AND notExpr)*
 *   notExpr   := NOT notExpr | '(' expr ')' | condition
 *   condition := operand op operand            op: = != <> < <= > >=  (one side a column, one a literal)
 *              | column [NOT] IN '(' literal (',' literal)* ')'
 *              | column [NOT] BETWEEN literal AND literal
 *              | column IS [NOT] NULL
 *              | column [NOT] LIKE 'pattern' [ESCAPE 'c']   (% any run, _ one character; \\ escapes by default)
 *              | column                       (a BOOLEAN column, meaning column = TRUE)
 *   literal   := [-]integer | [-]decimal | [-]float (1.5e3) | 'string' ('' escapes a quote)
 *              | TRUE | FALSE | NULL | DATE 'YYYY-MM-DD' | TIME 'HH:MM:SS[.fff]'
 *              | TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fffffffff]' | X'hex bytes'
 *   column    := identifier | "quoted identifier" ("" escapes a quote)
 *
 * TIMESTAMP literals are wall-clock values; for TIMESTAMP_LTZ columns they are read as UTC. A DATE
 * or 'string' literal is accepted where a DATE, TIME or TIMESTAMP column expects its own literal.
 * Keywords are case-insensitive; unquoted column names match exactly, else case-insensitively
 * when unambiguous. Literals are converted to the column's internal value
 * representation (values.ts of `@tidemark/format`) and type-checked; every problem raises a
 * {@link PredicateError} naming the column or the position in the text.
 */
import type { DataField, DataType, RowType } from '@tidemark/format';
import { PredicateError } from './errors.js';
import { and, likeMatcher, not, or, type CompareOp, type Predicate } from './predicate.js';

type TokenKind = 'ident' | 'qident' | 'string' | 'number' | 'op' | 'lparen' | 'rparen' | 'comma' | 'minus' | 'eof';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly pos: number;
}

/** Parses a predicate and type-checks it against the given row type (or its fields). */
export function parsePredicate(text: string, rowType: RowType | readonly DataField[]): Predicate {
  const fields = 'root' in rowType ? rowType.fields : rowType;
  const parser = new Parser(text, tokenize(text), fields);
  return parser.parse();
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_$]/.test(text[i]!)) i++;
      tokens.push({ kind: 'ident', text: text.slice(start, i), pos: start });
    } else if (c === '"' || c === "'" || c === '`') {
      const quote = c;
      let out = '';
      i++;
      for (;;) {
        if (i >= n) {
          throw new PredicateError(
            `unterminated ${quote === "'" ? 'string literal' : 'quoted identifier'} starting at position ${start + 1} in predicate: ${text}`,
          );
        }
        const d = text[i]!;
        if (d === quote) {
          if (text[i + 1] === quote) {
            out += quote;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        out += d;
        i++;
      }
      tokens.push({ kind: quote === "'" ? 'string' : 'qident', text: out, pos: start });
    } else if (/[0-9.]/.test(c)) {
      const m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i));
      if (!m) throw new PredicateError(`unexpected character '${c}' at position ${start + 1} in predicate: ${text}`);
      i += m[0].length;
      tokens.push({ kind: 'number', text: m[0], pos: start });
    } else if (c === '(' || c === ')' || c === ',') {
      i++;
      tokens.push({ kind: c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma', text: c, pos: start });
    } else if (c === '-') {
      i++;
      tokens.push({ kind: 'minus', text: c, pos: start });
    } else {
      const two = text.slice(i, i + 2);
      if (two === '<=' || two === '>=' || two === '!=' || two === '<>' || two === '==') {
        i += 2;
        tokens.push({ kind: 'op', text: two, pos: start });
      } else if (c === '<' || c === '>' || c === '=') {
        i++;
        tokens.push({ kind: 'op', text: c, pos: start });
      } else {
        throw new PredicateError(`unexpected character '${c}' at position ${start + 1} in predicate: ${text}`);
      }
    }
  }
  tokens.push({ kind: 'eof', text: '', pos: n });
  return tokens;
}

/** A parsed literal before it is converted to a column's type. */
type RawLiteral =
  | { readonly kind: 'number'; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly text: string; readonly pos: number }
  | { readonly kind: 'bool'; readonly value: boolean; readonly pos: number }
  | { readonly kind: 'null'; readonly pos: number }
  | { readonly kind: 'typed'; readonly type: 'DATE' | 'TIME' | 'TIMESTAMP' | 'X'; readonly text: string; readonly pos: number };

type Operand =
  { readonly kind: 'column'; readonly field: DataField; readonly pos: number } | { readonly kind: 'literal'; readonly lit: RawLiteral };

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IN', 'IS', 'NULL', 'TRUE', 'FALSE', 'BETWEEN']);
const TYPED_LITERALS = new Set(['DATE', 'TIME', 'TIMESTAMP', 'X']);

const FLIP: Record<CompareOp, CompareOp> = { '=': '=', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

/** Deepest nesting of parentheses and NOT a predicate may have. */
export const MAX_PREDICATE_NESTING = 100;

class Parser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly fields: readonly DataField[],
  ) {}

  parse(): Predicate {
    if (this.peek().kind === 'eof') throw new PredicateError('empty predicate');
    const p = this.orExpr();
    const t = this.peek();
    if (t.kind !== 'eof') this.fail(t, 'expected AND, OR or the end of the predicate');
    return p;
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const t = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return t;
  }

  private isKeyword(t: Token, kw: string): boolean {
    return t.kind === 'ident' && t.text.toUpperCase() === kw;
  }

  private acceptKeyword(kw: string): boolean {
    if (this.isKeyword(this.peek(), kw)) {
      this.i++;
      return true;
    }
    return false;
  }

  private expectKeyword(kw: string): void {
    if (!this.acceptKeyword(kw)) this.fail(this.peek(), `expected ${kw}`);
  }

  private fail(t: Token, what: string): never {
    const found = t.kind === 'eof' ? 'end of input' : `'${t.kind === 'string' ? `'${t.text}'` : t.text}'`;
    throw new PredicateError(`${what} but found ${found} at position ${t.pos + 1} in predicate: ${this.text}`);
  }

  private orExpr(): Predicate {
    const parts = [this.andExpr()];
    while (this.acceptKeyword('OR')) parts.push(this.andExpr());
    return parts.length === 1 ? parts[0]! : or(...parts);
  }

  private andExpr(): Predicate {
    const parts = [this.notExpr()];
    while (this.acceptKeyword('AND')) parts.push(this.notExpr());
    return parts.length === 1 ? parts[0]! : and(...parts);
  }

  private notExpr(): Predicate {
    const t = this.peek();
    if (this.isKeyword(t, 'NOT') || t.kind === 'lparen') {
      // Each level recurses here (and again in planning and evaluation): a limit gives a clear
      // error where thousands of levels would overflow the stack.
      if (++this.depth > MAX_PREDICATE_NESTING) {
        throw new PredicateError(
          `predicate nests parentheses or NOT more than ${MAX_PREDICATE_NESTING} levels deep (at position ${t.pos + 1})`,
        );
      }
      try {
        if (this.acceptKeyword('NOT')) return not(this.notExpr());
        this.next();
        const p = this.orExpr();
        if (this.peek().kind !== 'rparen') this.fail(this.peek(), "expected ')'");
        this.next();
        return p;
      } finally {
        this.depth--;
      }
    }
    return this.condition();
  }

  private condition(): Predicate {
    const left = this.operand();
    const t = this.peek();
    if (left.kind === 'column') {
      const column = left.field.name;
      const type = left.field.type;
      if (this.isKeyword(t, 'IS')) {
        this.next();
        const negated = this.acceptKeyword('NOT');
        this.expectKeyword('NULL');
        return { kind: 'isNull', column, type, negated };
      }
      const negated =
        this.isKeyword(t, 'NOT') &&
        (this.isKeyword(this.peek(1), 'IN') || this.isKeyword(this.peek(1), 'BETWEEN') || this.isKeyword(this.peek(1), 'LIKE'));
      if (negated) this.next();
      if (this.acceptKeyword('IN')) return this.inList(left.field, negated);
      if (this.acceptKeyword('LIKE')) return this.like(left.field, negated);
      if (this.acceptKeyword('BETWEEN')) {
        const lo = this.convert(this.literal(), left.field);
        this.expectKeyword('AND');
        const hi = this.convert(this.literal(), left.field);
        const p = and({ kind: 'compare', op: '>=', column, type, value: lo }, { kind: 'compare', op: '<=', column, type, value: hi });
        return negated ? not(p) : p;
      }
      if (t.kind !== 'op') {
        if (type.root === 'BOOLEAN') return { kind: 'compare', op: '=', column, type, value: true };
        this.fail(t, `expected a comparison, IN, BETWEEN, LIKE or IS [NOT] NULL after column '${column}'`);
      }
    } else if (t.kind !== 'op') {
      this.fail(t, 'expected a comparison operator');
    }
    this.next();
    const op: CompareOp = t.text === '<>' ? '!=' : t.text === '==' ? '=' : (t.text as CompareOp);
    const right = this.operand();
    if (left.kind === 'column' && right.kind === 'literal') {
      return this.compare(op, left.field, right.lit);
    }
    if (left.kind === 'literal' && right.kind === 'column') {
      return this.compare(FLIP[op], right.field, left.lit);
    }
    if (left.kind === 'column' && right.kind === 'column') {
      throw new PredicateError(
        `comparing two columns ('${left.field.name}' ${t.text} '${right.field.name}') is not supported; compare a column with a literal`,
      );
    }
    throw new PredicateError(`comparison at position ${t.pos + 1} needs a column on one side in predicate: ${this.text}`);
  }

  private compare(op: CompareOp, field: DataField, lit: RawLiteral): Predicate {
    const value = this.convert(lit, field);
    return { kind: 'compare', op, column: field.name, type: field.type, value };
  }

  /** `column [NOT] LIKE 'pattern' [ESCAPE 'c']` on a string column (backslash escapes by default). */
  private like(field: DataField, negated: boolean): Predicate {
    if (field.type.root !== 'VARCHAR' && field.type.root !== 'CHAR') {
      throw new PredicateError(`LIKE needs a CHAR or VARCHAR column, but '${field.name}' is ${field.type.root}`);
    }
    const pattern = this.next();
    if (pattern.kind !== 'string') this.fail(pattern, "LIKE needs a 'string' pattern");
    let escape = '\\';
    if (this.acceptKeyword('ESCAPE')) {
      const e = this.next();
      if (e.kind !== 'string' || [...e.text].length !== 1) this.fail(e, "ESCAPE takes one character in quotes, e.g. ESCAPE '!',");
      escape = e.text;
    }
    try {
      likeMatcher(pattern.text, escape);
    } catch (e) {
      throw new PredicateError(`LIKE pattern '${pattern.text}' at position ${pattern.pos + 1}: ${(e as Error).message}`);
    }
    return { kind: 'like', column: field.name, type: field.type, pattern: pattern.text, escape, negated };
  }

  private inList(field: DataField, negated: boolean): Predicate {
    if (this.peek().kind !== 'lparen') this.fail(this.peek(), "expected '(' after IN");
    this.next();
    const values: unknown[] = [];
    for (;;) {
      values.push(this.convert(this.literal(), field));
      const t = this.next();
      if (t.kind === 'rparen') break;
      if (t.kind !== 'comma') this.fail(t, "expected ',' or ')' in the IN list");
    }
    return { kind: 'in', column: field.name, type: field.type, values, negated };
  }

  private operand(): Operand {
    const t = this.peek();
    if (t.kind === 'qident') {
      this.next();
      return { kind: 'column', field: this.resolveColumn(t.text, t, true), pos: t.pos };
    }
    if (
      t.kind === 'ident' &&
      !KEYWORDS.has(t.text.toUpperCase()) &&
      !(TYPED_LITERALS.has(t.text.toUpperCase()) && this.peek(1).kind === 'string')
    ) {
      this.next();
      return { kind: 'column', field: this.resolveColumn(t.text, t, false), pos: t.pos };
    }
    return { kind: 'literal', lit: this.literal() };
  }

  private literal(): RawLiteral {
    const t = this.next();
    if (t.kind === 'minus') {
      const num = this.next();
      if (num.kind !== 'number') this.fail(num, "expected a number after '-'");
      return { kind: 'number', text: '-' + num.text, pos: t.pos };
    }
    if (t.kind === 'number') return { kind: 'number', text: t.text, pos: t.pos };
    if (t.kind === 'string') return { kind: 'string', text: t.text, pos: t.pos };
    if (t.kind === 'ident') {
      const kw = t.text.toUpperCase();
      if (kw === 'TRUE' || kw === 'FALSE') return { kind: 'bool', value: kw === 'TRUE', pos: t.pos };
      if (kw === 'NULL') return { kind: 'null', pos: t.pos };
      if (TYPED_LITERALS.has(kw) && this.peek().kind === 'string') {
        const s = this.next();
        return { kind: 'typed', type: kw as 'DATE' | 'TIME' | 'TIMESTAMP' | 'X', text: s.text, pos: t.pos };
      }
    }
    return this.fail(t, 'expected a literal');
  }

  private resolveColumn(name: string, t: Token, quoted: boolean): DataField {
    const exact = this.fields.find((f) => f.name === name);
    if (exact) return exact;
    if (!quoted) {
      // Unquoted identifiers are case-insensitive as in SQL, when that is unambiguous.
      const ci = this.fields.filter((f) => f.name.toLowerCase() === name.toLowerCase());
      if (ci.length === 1) return ci[0]!;
    }
    const names = this.fields.map((f) => f.name).join(', ');
    // "paid" is a column name in SQL; a shell user usually meant the string.
    const hint =
      quoted && this.text[t.pos] === '"'
        ? ` ("${name}" in double quotes names a column; a string takes single quotes: '${name.replaceAll("'", "''")}')`
        : '';
    throw new PredicateError(`unknown column '${name}' at position ${t.pos + 1} in predicate${hint}; columns are: ${names}`);
  }

  private convert(lit: RawLiteral, field: DataField): unknown {
    return convertLiteral(lit, field);
  }
}

// ---------------------------------------------------------------------------------------------
// Literal conversion

function typeName(t: DataType): string {
  switch (t.root) {
    case 'DECIMAL':
      return `DECIMAL(${t.precision}, ${t.scale})`;
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY':
      return t.length === 2147483647
        ? t.root === 'VARCHAR'
          ? 'STRING'
          : t.root === 'VARBINARY'
            ? 'BYTES'
            : `${t.root}(${t.length})`
        : `${t.root}(${t.length})`;
    case 'TIME':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return `${t.root}(${t.precision})`;
    default:
      return t.root;
  }
}

function describeLiteral(lit: RawLiteral): string {
  switch (lit.kind) {
    case 'number':
      return lit.text;
    case 'string':
      return `'${lit.text.replace(/'/g, "''")}'`;
    case 'bool':
      return lit.value ? 'TRUE' : 'FALSE';
    case 'null':
      return 'NULL';
    case 'typed':
      return `${lit.type} '${lit.text}'`;
  }
}

const INT_RANGES: Record<string, [number, number]> = {
  TINYINT: [-128, 127],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647],
};

/** Converts a literal to the internal value of `field`'s type, or throws a PredicateError. */
function convertLiteral(lit: RawLiteral, field: DataField): unknown {
  if (lit.kind === 'null') return null;
  const type = field.type;
  const mismatch = (why?: string): never => {
    throw new PredicateError(
      `cannot compare column '${field.name}' of type ${typeName(type)} with ${describeLiteral(lit)}${why ? `: ${why}` : ''}`,
    );
  };
  switch (type.root) {
    case 'BOOLEAN':
      if (lit.kind === 'bool') return lit.value;
      return mismatch('expected TRUE or FALSE');
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT': {
      if (lit.kind !== 'number' || !/^-?\d+$/.test(lit.text)) return mismatch('expected an integer');
      const [lo, hi] = INT_RANGES[type.root]!;
      const v = Number(lit.text);
      if (v < lo || v > hi) return mismatch(`out of range ${lo}..${hi}`);
      return v;
    }
    case 'BIGINT': {
      if (lit.kind !== 'number' || !/^-?\d+$/.test(lit.text)) return mismatch('expected an integer');
      const v = BigInt(lit.text);
      if (v < -(2n ** 63n) || v >= 2n ** 63n) return mismatch('out of the BIGINT range');
      return v;
    }
    case 'FLOAT':
    case 'DOUBLE': {
      if (lit.kind !== 'number') return mismatch('expected a number');
      const v = Number(lit.text);
      // A FLOAT column holds float32 values; round the literal the same way so `f = 0.1` matches.
      return type.root === 'FLOAT' ? Math.fround(v) : v;
    }
    case 'DECIMAL': {
      if (lit.kind !== 'number' || /[eE]/.test(lit.text)) return mismatch('expected a decimal number without exponent');
      return parseDecimalLiteral(lit.text, type.scale);
    }
    case 'CHAR':
    case 'VARCHAR':
      if (lit.kind === 'string') return lit.text;
      return mismatch("expected a 'string' literal");
    case 'BINARY':
    case 'VARBINARY':
      if (lit.kind === 'typed' && lit.type === 'X') {
        if (!/^([0-9a-fA-F]{2})*$/.test(lit.text)) return mismatch('expected an even number of hex digits');
        return Uint8Array.from(lit.text.match(/../g) ?? [], (h) => parseInt(h, 16));
      }
      return mismatch("expected a hex literal X'…'");
    case 'DATE': {
      if ((lit.kind === 'typed' && lit.type === 'DATE') || lit.kind === 'string') {
        const d = parseDate(lit.text);
        if (d === null) return mismatch("expected a date 'YYYY-MM-DD'");
        return d;
      }
      return mismatch("expected DATE 'YYYY-MM-DD'");
    }
    case 'TIME': {
      if ((lit.kind === 'typed' && lit.type === 'TIME') || lit.kind === 'string') {
        const t = parseTime(lit.text);
        if (t === null) return mismatch("expected a time 'HH:MM:SS[.fff]'");
        return t;
      }
      return mismatch("expected TIME 'HH:MM:SS'");
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      if (lit.kind === 'typed' && lit.type === 'DATE') {
        const d = parseDate(lit.text);
        if (d === null) return mismatch("expected a date 'YYYY-MM-DD'");
        return { millis: d * 86_400_000, nanoOfMillis: 0 };
      }
      if ((lit.kind === 'typed' && lit.type === 'TIMESTAMP') || lit.kind === 'string') {
        const ts = parseTimestamp(lit.text);
        if (ts === null) return mismatch("expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fffffffff]'");
        return ts;
      }
      return mismatch("expected TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fffffffff]'");
    }
    default:
      throw new PredicateError(`column '${field.name}' of type ${type.root} can only be tested with IS [NOT] NULL`);
  }
}

/**
 * Exact decimal literal → `{ unscaled, scale }` at the column's scale. A literal with more
 * significant fraction digits than the column keeps its own scale, so comparisons stay exact.
 */
function parseDecimalLiteral(text: string, columnScale: number): { unscaled: bigint; scale: number } {
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const intPart = dot < 0 ? body : body.slice(0, dot);
  let frac = dot < 0 ? '' : body.slice(dot + 1);
  if (frac.length > columnScale) frac = frac.replace(/0+$/, '');
  const scale = Math.max(columnScale, frac.length);
  const digits = (intPart === '' ? '0' : intPart) + frac.padEnd(scale, '0');
  const unscaled = BigInt(digits);
  return { unscaled: neg ? -unscaled : unscaled, scale };
}

/** 'YYYY-MM-DD' → days since epoch, or null when invalid. */
function parseDate(text: string): number | null {
  const m = /^\s*(-?\d{4,})-(\d{1,2})-(\d{1,2})\s*$/.exec(text);
  if (!m) return null;
  return daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

function daysFromCivil(y: number, mo: number, d: number): number | null {
  if (mo < 1 || mo > 12 || d < 1) return null;
  const ms = Date.UTC(2000, mo - 1, d);
  const probe = new Date(ms);
  probe.setUTCFullYear(y);
  if (probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  return Math.round(probe.getTime() / 86_400_000);
}

/** 'HH:MM[:SS[.fff]]' → millis of day (sub-millisecond digits are truncated as TIME(3) stores). */
function parseTime(text: string): number | null {
  const m = /^\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*$/.exec(text);
  if (!m) return null;
  const [h, mi, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
  if (h > 23 || mi > 59 || s > 59) return null;
  const ms = Number((m[4] ?? '').padEnd(9, '0').slice(0, 3));
  return ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

/** 'YYYY-MM-DD[( |T)HH:MM[:SS[.fffffffff]]]' → `{ millis, nanoOfMillis }` (UTC wall clock). */
function parseTimestamp(text: string): { millis: number; nanoOfMillis: number } | null {
  const m = /^\s*(-?\d{4,}-\d{1,2}-\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*$/.exec(text);
  if (!m) return null;
  const days = parseDate(m[1]!);
  if (days === null) return null;
  const [h, mi, s] = [Number(m[2] ?? '0'), Number(m[3] ?? '0'), Number(m[4] ?? '0')];
  if (h > 23 || mi > 59 || s > 59) return null;
  const frac = (m[5] ?? '').padEnd(9, '0');
  const millis = days * 86_400_000 + ((h * 60 + mi) * 60 + s) * 1000 + Number(frac.slice(0, 3));
  return { millis, nanoOfMillis: Number(frac.slice(3)) };
}
