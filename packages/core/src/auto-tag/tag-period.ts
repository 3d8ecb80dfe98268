/**
 * Paimon's `TagPeriodHandler`: the length of one tag period, the tag name of a period
 * (`tag.creation-period` with `tag.period-formatter`, or `tag.creation-period-duration`), and
 * back. Times are local wall-clock times held as UTC milliseconds (Java `LocalDateTime`). A tag
 * whose name parses as a period name is an automatic tag; parsing is LENIENT, as in Java (a
 * month 13 rolls over).
 */
import type { CoreOptions } from '../core-options.js';
import { utcMillis } from '../partition/date-pattern.js';

/** One way of naming tag periods. */
export interface TagPeriod {
  /** One period in milliseconds. */
  readonly periodMs: number;
  /** The name of the period starting at `localMillis`. */
  timeToTag(localMillis: number): string;
  /** The start of the period a tag name names, or null when the name is not an automatic tag name. */
  tagToTime(name: string): number | null;
  /** The start of the period before the one holding `localMillis` (the period a snapshot at that time completes). */
  normalizeToPreviousTag(localMillis: number): number;
}

type Layout = 'day' | 'day-compact' | 'hour' | 'hour-compact' | 'hour-compact-nospace' | 'minute-compact';

const PATTERNS: Record<Layout, RegExp> = {
  day: /^(\d{1,10})-(\d{2})-(\d{2})$/,
  'day-compact': /^(\d{1,10})(\d{2})(\d{2})$/,
  hour: /^(\d{1,10})-(\d{2})-(\d{2}) (\d{2})$/,
  'hour-compact': /^(\d{1,10})(\d{2})(\d{2}) (\d{2})$/,
  'hour-compact-nospace': /^(\d{1,10})(\d{2})(\d{2})(\d{2})$/,
  'minute-compact': /^(\d{1,10})(\d{2})(\d{2})(\d{2})(\d{2})$/,
};

const pad = (n: number): string => String(n).padStart(2, '0');

function format(layout: Layout, localMillis: number): string {
  const d = new Date(localMillis);
  const [y, mo, day, h, mi] = [
    d.getUTCFullYear(),
    pad(d.getUTCMonth() + 1),
    pad(d.getUTCDate()),
    pad(d.getUTCHours()),
    pad(d.getUTCMinutes()),
  ];
  switch (layout) {
    case 'day':
      return `${y}-${mo}-${day}`;
    case 'day-compact':
      return `${y}${mo}${day}`;
    case 'hour':
      return `${y}-${mo}-${day} ${h}`;
    case 'hour-compact':
      return `${y}${mo}${day} ${h}`;
    case 'hour-compact-nospace':
      return `${y}${mo}${day}${h}`;
    case 'minute-compact':
      return `${y}${mo}${day}${h}${mi}`;
  }
}

function parse(layout: Layout, name: string): number | null {
  const m = PATTERNS[layout].exec(name);
  if (m === null) return null;
  const n = (i: number): number => Number(m[i] ?? '0');
  return utcMillis(n(1), n(2), n(3), n(4), n(5));
}

function handler(periodMs: number, layout: Layout): TagPeriod {
  const daily = layout === 'day' || layout === 'day-compact';
  return {
    periodMs,
    timeToTag: (t) => format(layout, t),
    // Java's daily handler parses only what precedes the first space.
    tagToTime: (name) => parse(layout, daily ? name.split(' ')[0]! : name),
    normalizeToPreviousTag: (t) => Math.trunc(t / periodMs) * periodMs - periodMs,
  };
}

/** The period naming of a table's options. */
export function tagPeriodOf(options: CoreOptions): TagPeriod {
  const duration = options.tagCreationPeriodDurationMs;
  if (duration !== null) return handler(duration, 'minute-compact');
  const f = options.tagPeriodFormatter;
  switch (options.tagCreationPeriod) {
    case 'daily':
      return handler(86_400_000, f === 'with_dashes' ? 'day' : 'day-compact');
    case 'hourly':
      return handler(3_600_000, f === 'with_dashes' ? 'hour' : f === 'without_dashes' ? 'hour-compact' : 'hour-compact-nospace');
    case 'two-hours':
      return handler(7_200_000, 'hour');
  }
}
