/**
 * UTC offsets of IANA time zones at given instants, through `Intl` (the zone database of the
 * runtime). TIMESTAMP columns hold seconds since 2015-01-01 00:00:00 in the writer's zone, so
 * turning them into wall-clock values needs the writer zone's offset at each value.
 */
import { OrcDecodeError } from './errors.js';

const formatters = new Map<string, Intl.DateTimeFormat>();
const caches = new Map<string, Map<number, number>>();

/** True for zone names that are UTC at every instant. */
export function isUtcZone(zone: string): boolean {
  return zone === '' || /^(Etc\/)?(UTC|GMT|UCT|Zulu|Universal)([+-]0)?$/i.test(zone) || zone === 'Z';
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch (err) {
      throw new OrcDecodeError(`unknown writer time zone '${zone}'`, { cause: err });
    }
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Offset of `zone` from UTC in seconds at the instant `epochSeconds`. Cached per zone and 15-minute
 * slot (zone transitions fall on such boundaries in practice).
 */
export function zoneOffsetSeconds(zone: string, epochSeconds: number): number {
  if (isUtcZone(zone)) return 0;
  let cache = caches.get(zone);
  if (!cache) caches.set(zone, (cache = new Map()));
  const slot = Math.floor(epochSeconds / 900);
  const hit = cache.get(slot);
  if (hit !== undefined) return hit;
  const parts = formatter(zone).formatToParts(new Date(slot * 900 * 1000));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  let year = get('year');
  if (parts.find((p) => p.type === 'era')?.value === 'BC') year = 1 - year;
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to the 1900s.
  const asUtc = new Date(0);
  asUtc.setUTCFullYear(year, get('month') - 1, get('day'));
  asUtc.setUTCHours(get('hour'), get('minute'), get('second'), 0);
  const offset = Math.round(asUtc.getTime() / 1000 - slot * 900);
  if (cache.size > 100_000) cache.clear();
  cache.set(slot, offset);
  return offset;
}
