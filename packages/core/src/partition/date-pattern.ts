/**
 * The part of Java's `DateTimeFormatter.ofPattern(pattern)` (default SMART resolver) that
 * partition expiration needs: `partition.timestamp-formatter` patterns such as `yyyyMMdd`,
 * `yyyy-MM-dd HH:mm:ss` or `yyyy/MM/dd'T'HH`, parsed into a local date-time (epoch milliseconds
 * read as UTC, the way `LocalDateTime` values are held everywhere in tidemark). Parsing is as
 * strict as Java's: the whole value must match, fixed-width fields take exactly their digits,
 * adjacent numeric fields share a digit run, and month, day, hour, minute and second must be in
 * range (a day past the month's end is clamped to its last day, as SMART does).
 *
 * Also here: Java's default partition-time formats (`y-M-d` with an optional ` H:m:s[.f]`,
 * LENIENT), used when no formatter is set. Nothing here depends on table options.
 */

/** A pattern that Java would refuse, or that this subset does not support. */
export class DatePatternError extends Error {}

type Field = 'year' | 'reducedYear' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fraction';

type Part =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'number'; readonly field: Field; readonly min: number; readonly max: number }
  | { readonly kind: 'monthText'; readonly full: boolean };

/** A compiled pattern: {@link parse} returns local epoch milliseconds, or null when the text does not match. */
export interface DatePattern {
  readonly pattern: string;
  /** Whether the pattern has an hour (Java then parses a `LocalDateTime`; otherwise only a `LocalDate`, at midnight). */
  readonly hasTime: boolean;
  parse(text: string): number | null;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Java's SignStyle widths: a single letter parses 1..19 digits, two or more letters exactly that many (years: at least). */
function numberPart(letter: string, count: number): Part {
  switch (letter) {
    case 'y':
    case 'u':
      if (count === 2) return { kind: 'number', field: 'reducedYear', min: 2, max: 2 };
      return { kind: 'number', field: 'year', min: count < 4 ? count : 4, max: 19 };
    case 'M':
    case 'L':
      return { kind: 'number', field: 'month', min: count, max: count === 1 ? 19 : 2 };
    case 'd':
      return { kind: 'number', field: 'day', min: count, max: count === 1 ? 19 : 2 };
    case 'H':
      return { kind: 'number', field: 'hour', min: count, max: count === 1 ? 19 : 2 };
    case 'm':
      return { kind: 'number', field: 'minute', min: count, max: count === 1 ? 19 : 2 };
    case 's':
      return { kind: 'number', field: 'second', min: count, max: count === 1 ? 19 : 2 };
    case 'S':
      return { kind: 'number', field: 'fraction', min: count, max: count };
    default:
      throw unsupportedLetter(letter);
  }
}

/** The pattern letters of the supported subset. */
const SUPPORTED_LETTERS = 'yuMLdHmsS';

function unsupportedLetter(letter: string): DatePatternError {
  return new DatePatternError(`pattern letter '${letter}' is not supported (supported: y u M L d H m s S, quoted text and punctuation)`);
}

function tokenize(pattern: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      if (end < 0) throw new DatePatternError(`unterminated quote in pattern '${pattern}'`);
      // '' is a literal quote, inside or outside quoted text.
      parts.push({ kind: 'literal', text: end === i + 1 ? "'" : pattern.slice(i + 1, end).replace(/''/g, "'") });
      i = end + 1;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      if (!SUPPORTED_LETTERS.includes(c)) throw unsupportedLetter(c);
      let n = 1;
      while (pattern[i + n] === c) n++;
      if ((c === 'M' || c === 'L') && n >= 3) {
        if (n > 4) throw new DatePatternError(`too many pattern letters: ${c.repeat(n)}`);
        parts.push({ kind: 'monthText', full: n === 4 });
      } else {
        if (n > (c === 'S' ? 9 : c === 'y' || c === 'u' ? 19 : 2)) throw new DatePatternError(`too many pattern letters: ${c.repeat(n)}`);
        parts.push(numberPart(c, n));
      }
      i += n;
      continue;
    }
    if (c === '[' || c === ']' || c === '{' || c === '}' || c === '#') {
      throw new DatePatternError(`pattern character '${c}' is not supported`);
    }
    parts.push({ kind: 'literal', text: c });
    i++;
  }
  return parts;
}

/** Fields collected while parsing. */
type Values = Partial<Record<Field, number>> & { fractionDigits?: number };

/**
 * Compiles a Java `DateTimeFormatter` pattern.
 *
 * @throws DatePatternError for a pattern Java refuses or this subset does not support.
 */
export function compileDatePattern(pattern: string): DatePattern {
  const parts = tokenize(pattern);
  const fields = new Set(parts.flatMap((p) => (p.kind === 'number' ? [p.field] : p.kind === 'monthText' ? ['month' as Field] : [])));
  for (const f of fields) {
    if (parts.filter((p) => (p.kind === 'number' && p.field === f) || (f === 'month' && p.kind === 'monthText')).length > 1)
      throw new DatePatternError(`pattern '${pattern}' names the ${f} twice`);
  }
  const hasDate = (fields.has('year') || fields.has('reducedYear')) && fields.has('month') && fields.has('day');
  const hasTime = fields.has('hour');
  return {
    pattern,
    hasTime,
    parse(text: string): number | null {
      const v = match(parts, text);
      if (v === null || !hasDate) return null;
      return resolveSmart(v, hasTime);
    },
  };
}

/** Matches `text` against `parts` (the whole text); adjacent numeric parts split one digit run. */
function match(parts: readonly Part[], text: string): Values | null {
  const v: Values = {};
  let pos = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.kind === 'literal') {
      if (!text.startsWith(p.text, pos)) return null;
      pos += p.text.length;
      continue;
    }
    if (p.kind === 'monthText') {
      const names = MONTHS.map((m) => (p.full ? m : m.slice(0, 3)));
      const idx = names.findIndex((m) => text.startsWith(m, pos));
      if (idx < 0) return null;
      v.month = idx + 1;
      pos += names[idx]!.length;
      continue;
    }
    // A run of numeric parts with nothing between them: the later ones keep their fixed widths.
    let j = i + 1;
    let reserved = 0;
    while (j < parts.length && parts[j]!.kind === 'number') {
      const q = parts[j] as Extract<Part, { kind: 'number' }>;
      if (q.min !== q.max) return null;
      reserved += q.min;
      j++;
    }
    let digits = 0;
    while (pos + digits < text.length && text.charCodeAt(pos + digits) >= 48 && text.charCodeAt(pos + digits) <= 57) digits++;
    const own = Math.min(p.max, digits - reserved);
    if (own < p.min) return null;
    let at = pos;
    for (let k = i; k < j; k++) {
      const q = parts[k] as Extract<Part, { kind: 'number' }>;
      const width = k === i ? own : q.min;
      const s = text.slice(at, at + width);
      if (q.field === 'fraction') {
        v.fraction = Number(s.padEnd(9, '0'));
        v.fractionDigits = width;
      } else v[q.field] = Number(s);
      at += width;
    }
    pos = at;
    i = j - 1;
  }
  return pos === text.length ? v : null;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** Epoch milliseconds of a local date-time read as UTC; out-of-range fields roll over (LENIENT arithmetic). */
export function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, nanos = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime() + Math.floor(nanos / 1_000_000);
}

/** SMART resolution: fields in range, a day past the month's end clamped to its last day. */
function resolveSmart(v: Values, hasTime: boolean): number | null {
  const year = v.year ?? (v.reducedYear !== undefined ? 2000 + v.reducedYear : undefined);
  const { month, day } = v;
  if (year === undefined || month === undefined || day === undefined) return null;
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  const last = month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  const hour = hasTime ? (v.hour ?? 0) : 0;
  const minute = hasTime ? (v.minute ?? 0) : 0;
  const second = hasTime ? (v.second ?? 0) : 0;
  if (hour > 23 || minute > 59 || second > 59) return null;
  // Java refuses seconds or a fraction without minutes when resolving a time.
  if (hasTime && v.minute === undefined && (v.second !== undefined || v.fraction !== undefined)) return null;
  return utcMillis(year, month, Math.min(day, last), hour, minute, second, hasTime ? (v.fraction ?? 0) : 0);
}

/**
 * Java's default partition-time parsing (no `partition.timestamp-formatter`): `y-M-d H:m:s[.f]`
 * with 1–10 digit years and 1–2 digit fields, else `y-M-d` at midnight; LENIENT, so a month 13
 * rolls over into the next year. Null when neither matches.
 */
export function parseDefaultPartitionTime(text: string): number | null {
  const m = /^(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?$/.exec(text);
  if (m === null) return null;
  const n = (i: number): number => Number(m[i] ?? '0');
  return utcMillis(n(1), n(2), n(3), n(4), n(5), n(6), Number((m[7] ?? '').padEnd(9, '0')));
}
