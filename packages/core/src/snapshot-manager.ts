/**
 * Finding and reading snapshots (`snapshot/snapshot-<id>`), following Java Paimon's rules: the
 * LATEST / EARLIEST hint files are best-effort, so every answer is verified against the snapshot
 * files themselves and falls back to listing `snapshot/` (docs/format.md, "Hints").
 */
import type { FileIO } from '@tidemark/storage';
import { parseSnapshot, type Snapshot } from '@tidemark/format';
import { SnapshotNotFoundError, TimeTravelError } from './errors.js';
import { listFileNames, readIfExists } from './meta-files.js';
import { SNAPSHOT_PREFIX, type TablePaths } from './table-paths.js';

/** How many ids past a stale LATEST hint are probed before falling back to a listing. */
const MAX_FORWARD_PROBES = 8;

/** Ids read together (in parallel) when probing forward from a known snapshot. */
const PROBE_WINDOW = 4;

/** The newest snapshot found by {@link SnapshotManager.latestFrom}, and every snapshot read on the way. */
export interface LatestProbe {
  readonly latest: Snapshot | null;
  /** The snapshots read by the probe, by id (the start and the ones after it). */
  readonly read: ReadonlyMap<number, Snapshot>;
}

/**
 * Parses `<prefix><digits>` file names (Java ignores names whose suffix is not a pure integer,
 * e.g. temporary files); returns null for anything else.
 */
export function parseNumberedName(name: string, prefix: string): number | null {
  if (!name.startsWith(prefix)) return null;
  const digits = name.slice(prefix.length);
  if (!/^\d{1,15}$/.test(digits)) return null;
  return Number(digits);
}

/** Streams the ids of `<dir>/<prefix><digits>` files, in listing order (not sorted). */
export async function* listNumberedFiles(fileIO: FileIO, dir: string, prefix: string): AsyncGenerator<number> {
  for await (const name of listFileNames(fileIO, dir)) {
    const id = parseNumberedName(name, prefix);
    if (id !== null) yield id;
  }
}

/** Reads a hint file; null when missing or not a positive integer. */
export async function readHint(fileIO: FileIO, path: string): Promise<number | null> {
  const bytes = await readIfExists(fileIO, path);
  if (bytes === null) return null;
  const trimmed = new TextDecoder().decode(bytes).trim();
  if (!/^\d{1,15}$/.test(trimmed)) return null;
  const n = Number(trimmed);
  return n > 0 ? n : null;
}

/** Reads snapshots of one table (or branch). Stateless apart from its inputs; safe to share. */
export class SnapshotManager {
  constructor(
    readonly fileIO: FileIO,
    readonly paths: TablePaths,
  ) {}

  private exists(id: number): Promise<boolean> {
    return this.fileIO.exists(this.paths.snapshotPath(id));
  }

  /**
   * Id of the newest snapshot, or null for a table without snapshots. Uses the LATEST hint when
   * snapshot-n exists and snapshot-(n+1) does not; a stale hint is probed forward a few ids; a
   * missing, garbage or too-stale hint falls back to listing `snapshot/`.
   */
  async latestId(): Promise<number | null> {
    const hint = await readHint(this.fileIO, this.paths.latestHint);
    if (hint !== null) {
      const [here, next] = await Promise.all([this.exists(hint), this.exists(hint + 1)]);
      // Java trusts the hint when the next id is absent; we also require the hinted file itself,
      // so a hint that points past the real latest (garbage, or a rolled-back table) is not trusted.
      if (here && !next) return hint;
      if (here && next) {
        // Stale hint: ids are contiguous, so walk forward until the first gap.
        let id = hint + 1;
        for (let i = 0; i < MAX_FORWARD_PROBES; i++) {
          if (!(await this.exists(id + 1))) return id;
          id++;
        }
      }
    }
    return this.listExtreme('max');
  }

  /**
   * Id of the oldest snapshot of the chain, or null for a table without snapshots. Trusts the
   * EARLIEST hint whenever snapshot-n exists (as Java Paimon does), else lists `snapshot/`.
   *
   * Snapshot files with ids below a trusted hint are leftovers of an interrupted expiration: it
   * writes EARLIEST past a batch before deleting the batch, and one batch has no deletion order, so
   * a kill can leave some of them. Their data files are already gone; readers never see them and the
   * next expiration deletes them (see {@link earliestProbe}).
   */
  async earliestId(): Promise<number | null> {
    return (await this.earliestProbe()).id;
  }

  /**
   * {@link earliestId}, plus whether snapshot files below it may be left over (snapshot n-1
   * exists, n from a trusted hint). Expiration deletes the last file of each batch only after the
   * rest of the batch, so after a completed batch n-1 is gone and the check costs one request,
   * issued together with the hint check.
   */
  async earliestProbe(): Promise<{ readonly id: number | null; readonly leftoversBelow: boolean }> {
    const hint = await readHint(this.fileIO, this.paths.earliestHint);
    if (hint !== null) {
      const [here, prev] = await Promise.all([this.exists(hint), hint > 1 ? this.exists(hint - 1) : Promise.resolve(false)]);
      if (here) return { id: hint, leftoversBelow: prev };
    }
    return { id: await this.listExtreme('min'), leftoversBelow: false };
  }

  /**
   * Streams the ids of snapshot files below `earliest` (leftovers of an interrupted expiration,
   * see {@link earliestId}), in listing order.
   */
  async *leftoverIds(earliest: number): AsyncGenerator<number> {
    for await (const id of this.listIds()) if (id < earliest) yield id;
  }

  private async listExtreme(which: 'min' | 'max'): Promise<number | null> {
    let best: number | null = null;
    for await (const id of this.listIds()) {
      if (best === null || (which === 'max' ? id > best : id < best)) best = id;
    }
    return best;
  }

  /** Streams the ids of all snapshot files (listing order, not sorted). */
  listIds(): AsyncGenerator<number> {
    return listNumberedFiles(this.fileIO, this.paths.snapshotDir, SNAPSHOT_PREFIX);
  }

  /**
   * The ids of the snapshot chain (from {@link earliestId} on) in ascending order; leftovers of
   * an interrupted expiration below it are not included. Holds the ids in memory (snapshots are few).
   */
  async sortedIds(): Promise<number[]> {
    const [earliest, all] = await Promise.all([this.earliestId(), this.allSortedIds()]);
    return earliest === null ? all : all.filter((id) => id >= earliest);
  }

  private async allSortedIds(): Promise<number[]> {
    const ids: number[] = [];
    for await (const id of this.listIds()) ids.push(id);
    return ids.sort((a, b) => a - b);
  }

  /**
   * Reads snapshot `id` for a reader that names it (time travel, tags): like {@link snapshot}, but
   * an id below the earliest (a leftover of an interrupted expiration, whose files are gone) is not
   * found either.
   *
   * @throws SnapshotNotFoundError naming the earliest and latest ids.
   */
  async snapshotInChain(id: number): Promise<Snapshot> {
    const [s, earliest] = await Promise.all([this.tryGet(id), this.earliestId()]);
    if (s !== null && (earliest === null || id >= earliest)) return s;
    throw new SnapshotNotFoundError(id, earliest, await this.latestId());
  }

  /** Reads snapshot `id`, or null when its file does not exist. Corrupt files still throw. */
  async tryGet(id: number): Promise<Snapshot | null> {
    const path = this.paths.snapshotPath(id);
    const bytes = await readIfExists(this.fileIO, path);
    return bytes === null ? null : parseSnapshot(bytes, path);
  }

  /**
   * Reads snapshot `id`.
   *
   * @throws SnapshotNotFoundError naming the earliest and latest ids when it does not exist.
   */
  async snapshot(id: number): Promise<Snapshot> {
    const s = await this.tryGet(id);
    if (s !== null) return s;
    const [earliest, latest] = await Promise.all([this.earliestId(), this.latestId()]);
    throw new SnapshotNotFoundError(id, earliest, latest);
  }

  /**
   * The newest snapshot, starting from `knownId` (an id this process saw exist, e.g. the snapshot
   * its last commit created) instead of the LATEST hint: reads snapshot `knownId` and the ids
   * after it, `window` (default {@link PROBE_WINDOW}) in parallel, then one more per further round,
   * so a caller that is up to date needs one round trip; callers that expect few new snapshots
   * pass a smaller window. Snapshot `knownId` is read, not trusted: when it is gone (rolled back or expired)
   * or the table moved on by more than a few snapshots, this falls back to {@link latest}.
   * `known`: snapshot `knownId` as the caller read it a moment ago (e.g. the winner of a race just
   * lost); it is used as read instead of being read again.
   */
  async latestFrom(knownId: number | null, window: number = PROBE_WINDOW, known?: Snapshot): Promise<LatestProbe> {
    const read = new Map<number, Snapshot>();
    if (knownId === null) {
      const hint = await readHint(this.fileIO, this.paths.latestHint);
      if (hint === null) return { latest: await this.latest(), read };
      knownId = hint;
    }
    // The start itself must exist: a hint or a remembered id past the real latest is not trusted.
    const read_ = (from: number, n: number): Promise<Array<Snapshot | null>> =>
      Promise.all(Array.from({ length: n }, (_, i) => this.tryGet(from + i)));
    const width = Math.max(1, Math.min(window, MAX_FORWARD_PROBES));
    // A start the caller has just read itself need not be read again.
    const fresh = known !== undefined && known.id === knownId ? known : undefined;
    let got = fresh !== undefined ? [fresh, ...(await read_(knownId + 1, width))] : await read_(knownId, width + 1);
    const first = got[0] ?? null;
    if (first === null) return { latest: await this.latest(), read };
    let latest: Snapshot = first;
    read.set(first.id, first);
    got = got.slice(1);
    // Each further round reads one id more than the one before (up to PROBE_WINDOW): a caller
    // that expected one new snapshot and found it typically needs one absent id more, not four.
    for (let probed = width, step = width; ; probed += step) {
      for (const s of got) {
        if (s === null) return { latest, read };
        latest = s;
        read.set(s.id, s);
      }
      if (probed >= MAX_FORWARD_PROBES) break;
      step = Math.min(PROBE_WINDOW, step + 1);
      got = await read_(latest.id + 1, step);
    }
    return { latest: await this.latest(), read };
  }

  /** The newest snapshot, or null for a table without snapshots. */
  async latest(): Promise<Snapshot | null> {
    // Retry once: the latest snapshot can be expired between finding and reading it only on
    // tables that expire aggressively; a fresh lookup resolves that.
    for (let attempt = 0; ; attempt++) {
      const id = await this.latestId();
      if (id === null) return null;
      const s = await this.tryGet(id);
      if (s !== null || attempt >= 2) return s ?? this.snapshot(id);
    }
  }

  /** The oldest snapshot still present, or null for a table without snapshots. */
  async earliest(): Promise<Snapshot | null> {
    for (let attempt = 0; ; attempt++) {
      const id = await this.earliestId();
      if (id === null) return null;
      const s = await this.tryGet(id);
      if (s !== null || attempt >= 2) return s ?? this.snapshot(id);
    }
  }

  /**
   * The latest snapshot with `timeMillis <= timestampMs`: binary search on ids between earliest and
   * latest, tolerating ids whose files are missing (expired holes).
   *
   * @throws TimeTravelError when the table has no snapshots or `timestampMs` is before the earliest snapshot.
   */
  async snapshotAtOrBefore(timestampMs: number): Promise<Snapshot> {
    const [earliest, latestId] = await Promise.all([this.earliest(), this.latestId()]);
    if (earliest === null || latestId === null) {
      throw new TimeTravelError(`cannot time travel to ${formatTime(timestampMs)}: the table has no snapshots`);
    }
    if (earliest.timeMillis > timestampMs) {
      throw new TimeTravelError(
        `no snapshot at or before ${formatTime(timestampMs)}: the earliest snapshot ${earliest.id} was committed at ${formatTime(earliest.timeMillis)}`,
      );
    }
    let best = earliest;
    let lo = earliest.id + 1;
    let hi = latestId;
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      let probe = mid;
      let s = await this.tryGet(probe);
      while (s === null && probe < hi) s = await this.tryGet(++probe);
      if (s === null) {
        hi = mid - 1; // every id in [mid, hi] is missing
        continue;
      }
      if (s.timeMillis <= timestampMs) {
        best = s;
        lo = probe + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best;
  }

  /**
   * Snapshots from `fromId` (default: latest) down to the earliest, newest first; missing ids are
   * skipped. Reads one snapshot at a time.
   */
  async *iterateBackward(fromId?: number): AsyncGenerator<Snapshot> {
    const [earliest, latest] = await Promise.all([this.earliestId(), this.latestId()]);
    if (earliest === null || latest === null) return;
    for (let id = Math.min(fromId ?? latest, latest); id >= earliest; id--) {
      const s = await this.tryGet(id);
      if (s !== null) yield s;
    }
  }

  /** Snapshots from `fromId` (default: earliest) up to the latest, oldest first; missing ids are skipped. */
  async *iterateForward(fromId?: number): AsyncGenerator<Snapshot> {
    const [earliest, latest] = await Promise.all([this.earliestId(), this.latestId()]);
    if (earliest === null || latest === null) return;
    for (let id = Math.max(fromId ?? earliest, earliest); id <= latest; id++) {
      const s = await this.tryGet(id);
      if (s !== null) yield s;
    }
  }
}

/** `2024-01-01T10:00:00.000Z (1704103200000)` — ISO text plus the epoch millis the user may have typed. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : `${d.toISOString()} (${ms})`;
}
