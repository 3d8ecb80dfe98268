/**
 * Resolving which snapshot a read sees: the latest, a snapshot id, the latest snapshot at or
 * before a timestamp, or a tag (docs/format.md, "Time travel and tags", Paimon's `scan.snapshot-id`,
 * `scan.timestamp-millis`, `scan.tag-name`).
 */
import type { Snapshot } from '@tidemark/format';
import { TimeTravelError } from './errors.js';
import type { SnapshotManager } from './snapshot-manager.js';
import type { TagManager } from './tag-manager.js';

/** Where snapshots and tags of a table are read from (a `Table` provides both). */
export interface SnapshotSources {
  readonly snapshots: SnapshotManager;
  readonly tags: TagManager;
}

/** At most one selector may be set; none means the latest snapshot. */
export interface TimeTravelOptions {
  readonly snapshotId?: number;
  /** Epoch millis: selects the latest snapshot committed at or before this time. */
  readonly timestampMs?: number;
  /** Tag name: selects the tagged snapshot. */
  readonly tag?: string;
}

/**
 * Resolves the snapshot a read should see. Returns null only when no selector is given and the
 * table has no snapshots yet (an empty read).
 *
 * @throws TimeTravelError for conflicting selectors, invalid values, or a timestamp before the first snapshot.
 * @throws SnapshotNotFoundError for a snapshot id that does not exist (message names earliest and latest).
 * @throws TagNotFoundError for an unknown tag (message lists the available tags).
 */
export async function resolveSnapshot(table: SnapshotSources, options: TimeTravelOptions = {}): Promise<Snapshot | null> {
  const set = (['snapshotId', 'timestampMs', 'tag'] as const).filter((k) => options[k] !== undefined);
  if (set.length > 1) {
    throw new TimeTravelError(`choose only one of snapshot id, timestamp and tag (got ${set.join(' and ')})`);
  }
  if (options.snapshotId !== undefined) {
    const id = options.snapshotId;
    if (!Number.isSafeInteger(id) || id < 1) {
      throw new TimeTravelError(`invalid snapshot id ${id}: snapshot ids are positive integers`);
    }
    return table.snapshots.snapshotInChain(id);
  }
  if (options.timestampMs !== undefined) {
    const t = options.timestampMs;
    if (!Number.isFinite(t)) throw new TimeTravelError(`invalid timestamp ${t}: expected epoch milliseconds`);
    return table.snapshots.snapshotAtOrBefore(t);
  }
  if (options.tag !== undefined) {
    if (options.tag === '') throw new TimeTravelError('empty tag name');
    return table.tags.tag(options.tag);
  }
  return table.snapshots.latest();
}

/**
 * Parses a user-supplied time-travel timestamp: epoch milliseconds (digits) or ISO-8601
 * (`2024-01-01`, `2024-01-01T10:00:00`, `2024-01-01 10:00:00.123`, with optional `Z` / `+02:00`).
 * ISO text without a zone offset is taken as UTC so results do not depend on the machine's zone.
 *
 * @throws TimeTravelError when the text is neither.
 */
export function parseTimestampMillis(text: string): number {
  const s = text.trim();
  if (/^-?\d+$/.test(s)) return Number(s);
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?))?(Z|[+-]\d{2}:?\d{2})?$/i.exec(s);
  if (m) {
    const time = m[2] ?? '00:00:00';
    // Date.parse understands at most milliseconds.
    const trimmed = time.replace(/(\.\d{3})\d+$/, '$1');
    let zone = m[3] ?? 'Z';
    if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
    const ms = Date.parse(`${m[1]}T${trimmed}${zone.toUpperCase()}`);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new TimeTravelError(`invalid timestamp '${text}': expected epoch milliseconds or ISO-8601 such as 2024-01-01T10:00:00Z`);
}
