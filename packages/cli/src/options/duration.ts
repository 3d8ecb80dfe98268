/**
 * Parsing of time-valued options: `--older-than` (a duration back from now, or an absolute time)
 * and `--timestamp` (an absolute time). Errors are {@link UsageError}s naming the option.
 */
import { UsageError } from '../errors.js';

const unitMs: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** Accepted shapes, quoted in error messages. */
const durationHelp = 'a duration such as 90s, 30m, 1h, 1d or 7d';
const instantHelp = 'an ISO-8601 time such as 2024-05-01T12:00:00Z, or epoch milliseconds';

/**
 * Parses a duration: a non-negative integer followed by `ms`, `s`, `m`, `h`, `d` or `w`
 * (`90s`, `30m`, `1h`, `1d`, `7d`); `0` alone means zero.
 *
 * @returns the duration in milliseconds.
 * @throws UsageError naming `option` when `value` is not a duration.
 */
export function parseDuration(value: string, option: string): number {
  const ms = tryParseDuration(value);
  if (ms === undefined) throw new UsageError(`option '${option}' needs ${durationHelp}; got '${value}'`);
  return ms;
}

function tryParseDuration(value: string): number | undefined {
  const trimmed = value.trim();
  if (trimmed === '0') return 0;
  const m = /^(\d+)(ms|s|m|h|d|w)$/i.exec(trimmed);
  if (!m) return undefined;
  const ms = Number(m[1]) * unitMs[m[2]!.toLowerCase()]!;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * Parses an absolute time: epoch milliseconds (digits only), or ISO-8601 — a date
 * (`2024-05-01`, midnight UTC) or a date-time with an optional fraction and an optional zone
 * (`Z` or `±HH:MM`). A date-time without a zone is read as UTC, so that a cron job gives the same
 * answer on every machine.
 *
 * @returns epoch milliseconds.
 * @throws UsageError naming `option`.
 */
export function parseInstant(value: string, option: string): number {
  const ms = tryParseInstant(value);
  if (ms === undefined) throw new UsageError(`option '${option}' needs ${instantHelp}; got '${value}'`);
  return ms;
}

function tryParseInstant(value: string): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(trimmed);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  if (zone && m[4] === undefined) return undefined; // a zone only makes sense with a time of day
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const base = Date.UTC(year, month - 1, day, hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  // Date.UTC rolls 2024-02-30 over into March; refuse instead of guessing.
  if (new Date(base).getUTCDate() !== day) return undefined;
  let offsetMs = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const zm = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    offsetMs = (zm[1] === '-' ? -1 : 1) * (Number(zm[2]) * 3_600_000 + Number(zm[3]) * 60_000);
  }
  return base - offsetMs;
}

/** A resolved `--older-than`: the cutoff instant and how it was given. */
export interface OlderThan {
  /** Files/snapshots strictly older than this epoch-ms instant qualify. */
  readonly cutoffMs: number;
  /** The duration back from `now`, when the value was a duration. */
  readonly durationMs?: number;
}

/**
 * Parses an `--older-than` value: a duration counted back from `now` (`1d`), an ISO-8601 time or
 * epoch milliseconds.
 *
 * Durations are tried first, so a bare `0` means "zero duration" (cutoff = now), not 1970.
 *
 * @param option - the option name for error messages, e.g. `--older-than`.
 * @param now - the current time in epoch ms.
 * @throws UsageError naming `option` when the value is neither.
 */
export function parseOlderThan(value: string, option: string, now: number): OlderThan {
  const durationMs = tryParseDuration(value);
  if (durationMs !== undefined) return { cutoffMs: now - durationMs, durationMs };
  const instant = tryParseInstant(value);
  if (instant !== undefined) return { cutoffMs: instant };
  throw new UsageError(`option '${option}' needs ${durationHelp}, ${instantHelp}; got '${value}'`);
}
