/**
 * Paimon's date/time text and time-zone routines (`DateTimeUtils`, `BinaryStringUtils.toDate /
 * toTime / toTimestamp`), as the cast rules call them:
 *
 * - DATE is days since 1970-01-01, TIME milliseconds of the day, TIMESTAMP a wall-clock value
 *   stored as if UTC, TIMESTAMP_LTZ an instant;
 * - TIMESTAMP_LTZ is converted in the JVM's default time zone in Java; here in the process's local
 *   time zone (the `TZ` environment variable), with the same rules for gaps (shift forward) and
 *   overlaps (earlier offset);
 * - Java's `int` arithmetic (division toward zero, wrapping digit output) is kept where Paimon's
 *   code relies on it, e.g. `(int) (millis / 86400000)` for TIMESTAMP → DATE.
 */
import type { Timestamp } from '@tidemark/format';
import { daysFromCivil } from '../write/value-conversion.js';

/** Text a Java date/time parser refuses (`DateTimeException` / `DateTimeParseException` in Java). */
export class JavaDateTimeError extends Error {}

export const MILLIS_PER_DAY = 86_400_000;
const EPOCH_JULIAN = 2440588;

// ---------------------------------------------------------------------------------------------
// Calendar arithmetic (proleptic Gregorian, as java.time)
// ---------------------------------------------------------------------------------------------

/** The proleptic Gregorian date of days since 1970-01-01. */
export function civilDate(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

function isLeap(y: number): boolean {
  return y % 400 === 0 || (y % 4 === 0 && y % 100 !== 0);
}

function monthLength(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Java int division (toward zero). */
function idiv(a: number, b: number): number {
  return Math.trunc(a / b);
}

/** Java's `int2`/`int4` digit output: `(char) ('0' + (i / 10^k) % 10)`, wrapping like Java. */
function digits(i: number, n: number): string {
  let s = '';
  for (let k = n - 1; k >= 0; k--) s += String.fromCharCode(48 + (idiv(i, 10 ** k) % 10));
  return s;
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

/** `DateTimeUtils.formatDate(int)`: `yyyy-MM-dd` of the Julian-day algorithm Paimon uses. */
export function formatDate(date: number): string {
  const j = date + EPOCH_JULIAN + 32044;
  const g = idiv(j, 146097);
  const dg = j % 146097;
  const c = idiv((idiv(dg, 36524) + 1) * 3, 4);
  const dc = dg - c * 36524;
  const b = idiv(dc, 1461);
  const db = dc % 1461;
  const a = idiv((idiv(db, 365) + 1) * 3, 4);
  const da = db - a * 365;
  const y = g * 400 + c * 100 + b * 4 + a;
  const m = idiv(da * 5 + 308, 153) - 2;
  const d = da - idiv((m + 4) * 153, 5) + 122;
  const year = y - 4800 + idiv(m + 2, 12);
  const month = ((m + 2) % 12) + 1;
  return `${digits(year, 4)}-${digits(month, 2)}-${digits(d + 1, 2)}`;
}

/**
 * `DateTimeUtils.formatTimestampMillis(int, precision)` (TIME → text): `HH:mm:ss`, then for
 * precision > 0 a point and the millisecond digits, stopping after the last non-zero one (at least
 * one digit).
 */
export function formatTime(time: number, precision: number): string {
  let t = time;
  while (t < 0) t += MILLIS_PER_DAY;
  const h = idiv(t, 3600000);
  const t2 = t % 3600000;
  const m = idiv(t2, 60000);
  const t3 = t2 % 60000;
  const s = idiv(t3, 1000);
  let ms = t3 % 1000;
  let out = `${digits(h, 2)}:${digits(m, 2)}:${digits(s, 2)}`;
  if (precision > 0) {
    out += '.';
    let p = precision;
    while (p > 0) {
      out += String.fromCharCode(48 + idiv(ms, 100));
      ms = (ms % 100) * 10;
      if (ms === 0) break;
      p--;
    }
  }
  return out;
}

/** Wall-clock fields of a TIMESTAMP value (epoch as UTC). */
function localDateTime(ts: Timestamp): { year: number; month: number; day: number; h: number; m: number; s: number; nano: number } {
  const days = Math.floor(ts.millis / MILLIS_PER_DAY);
  const msOfDay = ts.millis - days * MILLIS_PER_DAY;
  const { year, month, day } = civilDate(days);
  return {
    year,
    month,
    day,
    h: Math.floor(msOfDay / 3600000),
    m: Math.floor(msOfDay / 60000) % 60,
    s: Math.floor(msOfDay / 1000) % 60,
    nano: (msOfDay % 1000) * 1_000_000 + ts.nanoOfMillis,
  };
}

/**
 * `DateTimeUtils.formatTimestamp(ts, precision)`: `yyyy-MM-dd HH:mm:ss` and the nanoseconds with
 * trailing zeros dropped, but never fewer than `precision` digits.
 */
export function formatTimestamp(ts: Timestamp, precision: number): string {
  const f = localDateTime(ts);
  let fraction = String(f.nano).padStart(9, '0');
  while (fraction.length > precision && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  const base = `${digits(f.year, 4)}-${digits(f.month, 2)}-${digits(f.day, 2)} ${digits(f.h, 2)}:${digits(f.m, 2)}:${digits(f.s, 2)}`;
  return fraction.length > 0 ? `${base}.${fraction}` : base;
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/** Java's `StringUtils.isNumeric`: non-empty and every char a (Unicode) decimal digit. */
export function isNumeric(s: string): boolean {
  return s.length > 0 && /^\p{Nd}+$/u.test(s);
}

function isAsciiInteger(s: string): boolean {
  return /^[0-9]+$/.test(s);
}

/** Java's `Integer.parseInt` of a string of ASCII digits (throws past the int range). */
function parseIntStrict(s: string): number {
  const v = Number(s);
  if (v > 2147483647) throw new JavaDateTimeError(`For input string: "${s}"`);
  return v;
}

/** `DateTimeUtils.parseDate`: `y[-m[-d]]` (text after the first space ignored), or null. */
export function parseDate(text: string): number | null {
  let s = text;
  const ws1 = s.indexOf(' ');
  if (ws1 > 0) s = s.slice(0, ws1);
  const part = (a: number, b?: number): number | null => {
    const t = s.slice(a, b).trim();
    return isAsciiInteger(t) ? parseIntStrict(t) : null;
  };
  const hyphen1 = s.indexOf('-');
  let y: number | null;
  let m: number | null = 1;
  let d: number | null = 1;
  if (hyphen1 < 0) y = part(0);
  else {
    y = part(0, hyphen1);
    const hyphen2 = s.indexOf('-', hyphen1 + 1);
    if (hyphen2 < 0) m = part(hyphen1 + 1);
    else {
      m = part(hyphen1 + 1, hyphen2);
      d = m === null ? null : part(hyphen2 + 1);
    }
  }
  if (y === null || m === null || d === null) return null;
  if (y < 0 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) return null;
  if (m === 2 && d > 28 && !(isLeap(y) && d === 29)) return null;
  if (d === 31 && ![1, 3, 5, 7, 8, 10, 12].includes(m)) return null;
  return daysFromCivil(y, m, d);
}

/** `DateTimeUtils.parseTime`: `h[:m[:s[.fff]]]` with an optional `±hh[:mm]` zone, as milliseconds; or null. */
export function parseTime(v: string): number | null {
  const colon1 = v.indexOf(':');
  let operator = -1;
  let end = v.length;
  let timezone = v.indexOf('-');
  if (timezone < 0) {
    timezone = v.indexOf('+');
    operator = 1;
  }
  const int = (a: number, b?: number): number | null => {
    const t = v.slice(a, b).trim();
    return isAsciiInteger(t) ? parseIntStrict(t) : null;
  };
  let tzHour = 0;
  let tzMinute = 0;
  if (timezone >= 0) {
    end = timezone;
    const colon3 = v.indexOf(':', timezone);
    if (colon3 < 0) {
      const h = int(timezone + 1);
      if (h === null) return null;
      tzHour = h;
    } else {
      const h = int(timezone + 1, colon3);
      const m = h === null ? null : int(colon3 + 1);
      if (h === null || m === null) return null;
      tzHour = h;
      tzMinute = m;
    }
  }
  let hour: number | null;
  let minute: number | null = 0;
  let second: number | null = 0;
  let milli = 0;
  if (colon1 < 0) hour = int(0, end);
  else {
    hour = int(0, colon1);
    const colon2 = v.indexOf(':', colon1 + 1);
    if (colon2 < 0) minute = int(colon1 + 1, end);
    else {
      minute = int(colon1 + 1, colon2);
      const dot = v.indexOf('.', colon2);
      if (dot < 0) second = int(colon2 + 1, end);
      else {
        second = int(colon2 + 1, dot);
        milli = parseFraction(v.slice(dot + 1, end).trim());
      }
    }
  }
  if (hour === null || minute === null || second === null) return null;
  hour += operator * tzHour;
  minute += operator * tzMinute;
  return (hour * 3600000 + minute * 60000 + second * 1000 + milli) | 0;
}

/** `DateTimeUtils.parseFraction`: three digits of milliseconds, rounded half up on the fourth. */
function parseFraction(v: string): number {
  let multiplier = 100;
  let r = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    r += multiplier * (c < 48 || c > 57 ? 0 : c - 48);
    if (multiplier < 10) {
      if (i + 1 < v.length && v.charCodeAt(i + 1) >= 53) r++;
      break;
    }
    multiplier = idiv(multiplier, 10);
  }
  return r;
}

/**
 * Fields of Paimon's default timestamp pattern `yyyy-[MM][M]-[dd][d][ [HH][H]:[mm][m]:[ss][s][.n]]`
 * (java.time, strict parsing, SMART resolving), defaulted and truncated as
 * `DateTimeUtils.parseTimestampData` does: the wall-clock value as epoch milliseconds (UTC) and
 * nanoseconds of the millisecond.
 *
 * @throws JavaDateTimeError for text the pattern does not fully match or values out of range.
 */
export function parseTimestampText(text: string, precision: number): Timestamp {
  const fail = (why: string): never => {
    throw new JavaDateTimeError(`Text '${text}' could not be parsed${why ? `: ${why}` : ''}`);
  };
  let pos = 0;
  const fields = new Map<string, number>();
  const set = (field: string, v: number): boolean => {
    const old = fields.get(field);
    if (old !== undefined && old !== v) return false;
    fields.set(field, v);
    return true;
  };
  const digitRun = (from: number, max: number): number => {
    let i = from;
    while (i < text.length && i - from < max && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    return i - from;
  };
  // yyyy: exactly four digits, or '+' and more than four (year-of-era, so >= 1).
  {
    const plus = text[pos] === '+';
    const minus = text[pos] === '-';
    const start = pos + (plus || minus ? 1 : 0);
    const n = digitRun(start, 19);
    if (n < 4 || (plus && n <= 4) || (!plus && !minus && n > 4)) fail(`at index ${pos}`);
    const v = Number(text.slice(start, start + n)) * (minus ? -1 : 1);
    if (v < 1 || v > 999_999_999) fail(`Invalid value for YearOfEra: ${v}`);
    fields.set('year', v);
    pos = start + n;
  }
  const literal = (c: string): boolean => {
    if (text[pos] !== c) return false;
    pos++;
    return true;
  };
  /**
   * `[XX][X]`: an optional two-digit value, then an optional variable-width one (1..19 digits, '-'
   * allowed); each is its own optional section, so a value that conflicts with one already parsed
   * for the field is rolled back, not an error.
   */
  const twoThenOne = (field: string): true => {
    const n2 = digitRun(pos, 2);
    if (n2 === 2 && set(field, Number(text.slice(pos, pos + 2)))) pos += 2;
    const neg = text[pos] === '-';
    const start = pos + (neg ? 1 : 0);
    const n1 = digitRun(start, 19);
    if (n1 >= 1 && set(field, Number(text.slice(start, start + n1)) * (neg ? -1 : 1))) pos = start + n1;
    return true;
  };
  if (!literal('-')) fail(`at index ${pos}`);
  twoThenOne('month');
  if (!literal('-')) fail(`at index ${pos}`);
  twoThenOne('day');
  // The optional time section is all or nothing.
  if (pos < text.length) {
    const savePos = pos;
    const saveFields = new Map(fields);
    const ok =
      literal(' ') &&
      twoThenOne('hour') &&
      literal(':') &&
      twoThenOne('minute') &&
      literal(':') &&
      twoThenOne('second') &&
      (() => {
        if (text[pos] !== '.') return true;
        pos++;
        const n = digitRun(pos, 9);
        set('nano', n > 0 ? Number(text.slice(pos, pos + n).padEnd(9, '0')) : 0);
        pos += n;
        return true;
      })();
    if (!ok) {
      pos = savePos;
      fields.clear();
      for (const [k, v] of saveFields) fields.set(k, v);
    }
  }
  if (pos < text.length) fail(`unparsed text found at index ${pos}`);

  const range = (field: string, lo: number, hi: number, name: string): void => {
    const v = fields.get(field);
    if (v !== undefined && (v < lo || v > hi)) fail(`Invalid value for ${name} (valid values ${lo} - ${hi}): ${v}`);
  };
  const year = fields.get('year')!;
  let month = fields.get('month');
  let day = fields.get('day');
  let hour = fields.get('hour');
  let minute = fields.get('minute');
  let second = fields.get('second');
  let nano = fields.get('nano');
  let excessDay = 0;
  // SMART resolving: a full date clamps the day to the month; an hour resolves the time (24:00:00 = next day).
  if (month !== undefined && day !== undefined) {
    range('month', 1, 12, 'MonthOfYear');
    range('day', 1, 31, 'DayOfMonth');
    day = Math.min(day, monthLength(year, month));
  }
  if (
    hour !== undefined &&
    !(
      (minute === undefined && (second !== undefined || nano !== undefined)) ||
      (minute !== undefined && second === undefined && nano !== undefined)
    )
  ) {
    range('minute', 0, 59, 'MinuteOfHour');
    range('second', 0, 59, 'SecondOfMinute');
    if (hour === 24 && (minute ?? 0) === 0 && (second ?? 0) === 0 && (nano ?? 0) === 0) {
      hour = 0;
      if (month !== undefined && day !== undefined) excessDay = 1;
    }
  }
  range('month', 1, 12, 'MonthOfYear');
  range('day', 1, 31, 'DayOfMonth');
  if (hour !== undefined && (hour < 0 || hour > 23)) fail(`Invalid value for HourOfDay (valid values 0 - 23): ${hour}`);
  range('minute', 0, 59, 'MinuteOfHour');
  range('second', 0, 59, 'SecondOfMinute');
  month ??= 1;
  day ??= 1;
  hour ??= 0;
  minute ??= 0;
  second ??= 0;
  nano ??= 0;
  if (day > monthLength(year, month)) fail(`Invalid date '${monthName(month)} ${day}'`);
  if (precision === 0) nano = 0;
  else if (precision !== 9) {
    const unit = 10 ** (9 - precision);
    nano = Math.floor(nano / unit) * unit;
  }
  const days = daysFromCivil(year, month, day) + excessDay;
  return timestampOf(
    days * MILLIS_PER_DAY + hour * 3600000 + minute * 60000 + second * 1000 + Math.floor(nano / 1_000_000),
    nano % 1_000_000,
  );
}

function monthName(m: number): string {
  return ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'][m - 1]!;
}

/** Largest epoch milliseconds a JS Date (and so tidemark's zone conversions) can hold. */
const MAX_MILLIS = 8.64e15;

/** A Timestamp value, refused past the range tidemark represents exactly. */
export function timestampOf(millis: number, nanoOfMillis = 0): Timestamp {
  if (!(Math.abs(millis) <= MAX_MILLIS))
    throw new JavaDateTimeError(`timestamp ${millis} ms is out of the supported range (±${MAX_MILLIS} ms)`);
  return { millis, nanoOfMillis };
}

/**
 * `DateTimeUtils.truncate(ts, precision)`: when the nanosecond-of-second has more digits than
 * `precision` (as Java prints it, without leading zeros), the digits below the precision are
 * zeroed — on the epoch milliseconds toward zero for precision <= 3, on the nanos otherwise.
 */
export function truncateTimestamp(ts: Timestamp, precision: number): Timestamp {
  const msOfSecond = ((ts.millis % 1000) + 1000) % 1000;
  const nanoOfSecond = msOfSecond * 1_000_000 + ts.nanoOfMillis;
  if (String(nanoOfSecond).length <= precision) return ts;
  if (precision <= 3) {
    const unit = 10 ** (3 - precision);
    return { millis: Math.trunc(ts.millis / unit) * unit + 0, nanoOfMillis: 0 };
  }
  const unit = 10 ** (9 - precision);
  return { millis: ts.millis, nanoOfMillis: Math.floor(ts.nanoOfMillis / unit) * unit };
}

// ---------------------------------------------------------------------------------------------
// The local time zone (Java: TimeZone.getDefault())
// ---------------------------------------------------------------------------------------------

/** Wall-clock milliseconds (as if UTC) of the instant `millis` in the local time zone. */
export function instantToLocal(millis: number): number {
  const d = new Date(millis);
  if (Number.isNaN(d.getTime())) throw new JavaDateTimeError(`instant ${millis} ms is out of range`);
  const w = new Date(0);
  w.setUTCFullYear(d.getFullYear(), d.getMonth(), d.getDate());
  w.setUTCHours(d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds());
  return w.getTime();
}

/**
 * The instant of the wall-clock milliseconds `wall` in the local time zone: in a gap the time moves
 * forward by the gap's length, in an overlap the earlier offset wins (java.time's `ZonedDateTime.ofLocal`).
 */
export function localToInstant(wall: number): number {
  const f = new Date(wall);
  if (Number.isNaN(f.getTime())) throw new JavaDateTimeError(`date-time ${wall} ms is out of range`);
  const d = new Date(0);
  d.setFullYear(f.getUTCFullYear(), f.getUTCMonth(), f.getUTCDate());
  d.setHours(f.getUTCHours(), f.getUTCMinutes(), f.getUTCSeconds(), f.getUTCMilliseconds());
  return d.getTime();
}

/** `DateTimeUtils.timestampToTimestampWithLocalZone`: the TIMESTAMP's wall clock as a local instant. */
export function timestampToLtz(ts: Timestamp): Timestamp {
  return timestampOf(localToInstant(ts.millis), ts.nanoOfMillis);
}

/** `DateTimeUtils.timestampWithLocalZoneToTimestamp`: the local wall clock of the instant. */
export function ltzToTimestamp(ts: Timestamp): Timestamp {
  return timestampOf(instantToLocal(ts.millis), ts.nanoOfMillis);
}
