/**
 * Tag files (`tag/tag-<name>`): the tagged snapshot's JSON plus `tagCreateTime` and
 * `tagTimeRetained`, written by Jackson's JavaTimeModule.
 */
import { CorruptFileError, FormatError } from './errors.js';
import { JsonNumber, stringifyJackson, type JsonValue } from './json.js';
import { parseObject, snapshotFromJson, snapshotToJson, type Snapshot } from './snapshot.js';
import type { Timestamp } from './values.js';

/** A `java.time.Duration`: whole seconds plus 0..999999999 nanoseconds. */
export interface TagDuration {
  readonly seconds: number;
  readonly nanos: number;
}

/** A tag: a full snapshot plus optional creation time and retention. */
export interface Tag extends Snapshot {
  /** Local wall-clock creation time (a `LocalDateTime`), stored as if UTC. */
  readonly tagCreateTime?: Timestamp;
  /** How long the tag is retained after creation. */
  readonly tagTimeRetained?: TagDuration;
}

/**
 * Parses a tag file.
 *
 * @param path used in error messages only.
 * @throws CorruptFileError when the content is not a valid tag.
 */
export function parseTag(text: string | Uint8Array, path: string): Tag {
  const o = parseObject(text, path);
  try {
    const tag: { -readonly [K in keyof Tag]: Tag[K] } = snapshotFromJson(o);
    const created = o['tagCreateTime'];
    if (created !== undefined && created !== null) tag.tagCreateTime = parseLocalDateTime(created);
    const retained = o['tagTimeRetained'];
    if (retained !== undefined && retained !== null) tag.tagTimeRetained = parseDuration(retained);
    return tag;
  } catch (e) {
    throw new CorruptFileError(path, `invalid tag: ${(e as Error).message}`, { cause: e });
  }
}

/** Prints a tag as Java does: snapshot members first, then `tagCreateTime`, `tagTimeRetained`. */
export function serializeTag(tag: Tag): string {
  return stringifyJackson({
    ...snapshotToJson(tag),
    tagCreateTime: tag.tagCreateTime === undefined ? undefined : localDateTimeToJson(tag.tagCreateTime),
    tagTimeRetained: tag.tagTimeRetained === undefined ? undefined : durationToJson(tag.tagTimeRetained),
  });
}

const MS_PER_DAY = 86_400_000;

/** Jackson writes LocalDateTime as `[y, m, d, h, mi]`, adding seconds and nanos only when non-zero. */
function parseLocalDateTime(v: JsonValue): Timestamp {
  if (!Array.isArray(v) || v.length < 5 || v.length > 7 || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) {
    throw new FormatError('"tagCreateTime" must be an array [year, month, day, hour, minute, second?, nanos?]');
  }
  const [y, mo, d, h, mi, s = 0, nanos = 0] = v as number[];
  const date = new Date(0);
  date.setUTCFullYear(y ?? 0, (mo ?? 1) - 1, d ?? 1);
  date.setUTCHours(h ?? 0, mi ?? 0, s, 0);
  const millis = date.getTime() + Math.floor(nanos / 1_000_000);
  return { millis, nanoOfMillis: nanos % 1_000_000 };
}

function localDateTimeToJson(t: Timestamp): JsonValue {
  const day = Math.floor(t.millis / MS_PER_DAY);
  const msOfDay = t.millis - day * MS_PER_DAY;
  const date = new Date(day * MS_PER_DAY);
  const second = Math.floor(msOfDay / 1000) % 60;
  const nanos = (msOfDay % 1000) * 1_000_000 + t.nanoOfMillis;
  const out: number[] = [
    date.getUTCFullYear(),
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    Math.floor(msOfDay / 3_600_000),
    Math.floor(msOfDay / 60_000) % 60,
  ];
  if (second > 0 || nanos > 0) {
    out.push(second);
    if (nanos > 0) out.push(nanos);
  }
  return out;
}

/** Jackson writes a Duration as decimal seconds with nine fraction digits, e.g. `4.000000000`. */
function parseDuration(v: JsonValue): TagDuration {
  const text = v instanceof JsonNumber ? v.text : typeof v === 'number' || typeof v === 'bigint' ? String(v) : undefined;
  const m = text === undefined ? null : /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) throw new FormatError('"tagTimeRetained" must be a number of seconds');
  // Exact decimal arithmetic in nanoseconds: digits × 10^(exp - fractionDigits + 9).
  const frac = m[3] ?? '';
  let nanosTotal = BigInt((m[2] ?? '0') + frac);
  const shift = Number(m[4] ?? '0') - frac.length + 9;
  nanosTotal = shift >= 0 ? nanosTotal * 10n ** BigInt(shift) : nanosTotal / 10n ** BigInt(-shift);
  if (m[1] === '-') nanosTotal = -nanosTotal;
  let seconds = nanosTotal / 1_000_000_000n;
  let nanos = nanosTotal % 1_000_000_000n;
  if (nanos < 0n) {
    seconds -= 1n;
    nanos += 1_000_000_000n;
  }
  return { seconds: Number(seconds), nanos: Number(nanos) };
}

/** Mirrors jackson-datatype-jsr310 `DecimalUtils.toBigDecimal(seconds, nanos)` printed by `BigDecimal.toString()`. */
function durationToJson(d: TagDuration): JsonValue {
  if (d.nanos === 0 && d.seconds === 0) return new JsonNumber('0.0');
  const total = BigInt(d.seconds) * 1_000_000_000n + BigInt(d.nanos);
  return new JsonNumber(bigDecimalToString(total, 9));
}

/** Java `BigDecimal.toString()` for a non-negative scale. */
function bigDecimalToString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString();
  const adjusted = digits.length - 1 - scale;
  let out: string;
  if (adjusted >= -6) {
    out =
      digits.length > scale
        ? `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`
        : `0.${digits.padStart(scale, '0')}`;
  } else {
    out = `${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}E${adjusted}`;
  }
  return neg ? '-' + out : out;
}
