/**
 * Automatic tags as Paimon's `TagAutoCreation` makes them (`tag.automatic-creation` =
 * `process-time` or `watermark`): each snapshot has a time (its commit time in this machine's
 * zone, or its watermark in `sink.watermark-time-zone`); the first snapshot whose time reaches the
 * end of the period after the last automatic tag plus `tag.creation-delay` gets the tag of the
 * period its time completes (`2024-03-05` for a snapshot at 2024-03-06 00:10 with a daily
 * period). The very first automatic tag goes to the first snapshot, as in Java.
 *
 * Where Java walks every snapshot since the last automatic tag, this looks at the newest snapshot
 * first and searches (galloping, then halving) only when a boundary was crossed (snapshot times
 * and watermarks grow with snapshot ids), so a committer pays nothing between boundaries and a
 * fresh process a few reads, however many snapshots the period holds. The state rebuilds itself from
 * the tags on storage, which is what makes a crash between a commit and its tag harmless: the next
 * run finds the last automatic tag, then the snapshot that crossed the boundary, and tags it
 * (create-if-absent: a tag written just before the crash is not written twice).
 */
import { zoneOffsetSeconds, type Snapshot } from '@tidemark/format';
import { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import { TagManager } from '../tag-manager.js';
import { tagDurationOf, tagOf, writeTag } from '../tags.js';
import { epochToLocalMillis } from '../partition/partition-entries.js';
import { tagPeriodOf, type TagPeriod } from './tag-period.js';

/** A tag an automatic run created or deleted. */
export interface AutoTagEvent {
  readonly name: string;
  readonly snapshotId: number;
}

/** Most tags one run creates (a table turning automatic tags on backfills its retained history). */
const MAX_TAGS_PER_RUN = 1000;

/** Java writes `Long.MIN_VALUE` for "no watermark" in some versions; anything this low is none. */
const NO_WATERMARK_BELOW = -(2n ** 62n);

/** Local wall-clock time (as UTC millis) of an instant in an IANA zone. */
export function zonedLocalMillis(epochMillis: number, zone: string): number {
  return epochMillis + zoneOffsetSeconds(zone, Math.floor(epochMillis / 1000)) * 1000;
}

/** Paimon's `TagTimeExtractor`: the time a snapshot is tagged by, or null (no watermark). */
export function snapshotTagTime(ctx: TableContext, s: Snapshot): number | null {
  if (ctx.options.tagAutomaticCreation === 'watermark') {
    if (s.watermark === undefined || s.watermark < NO_WATERMARK_BELOW) return null;
    return zonedLocalMillis(Number(s.watermark), ctx.options.sinkWatermarkTimeZone);
  }
  return epochToLocalMillis(s.timeMillis);
}

/** Settings of one {@link TagAutoCreation.run}. */
export interface TagAutoCreationRunOptions {
  /** Clock of the tags' `tagCreateTime` (tests). */
  readonly now?: () => number;
  /** The snapshot the caller just committed: the run looks no further, and does not read it again. */
  readonly created?: Snapshot | null;
  /** Report the tags without writing them (the state moves on as if they were written). */
  readonly dryRun?: boolean;
}

/**
 * The automatic-tag state of one table (one per committer context, or per maintenance run): the
 * time of the last automatic tag and the first snapshot not looked at yet.
 */
export class TagAutoCreation {
  private readonly period: TagPeriod;
  private readonly snapshots: SnapshotManager;
  private readonly tags: TagManager;
  /** Start of the period of the last automatic tag (null: none yet); undefined until loaded. */
  private lastTagTime: number | null | undefined = undefined;
  private scanFrom = 1;

  constructor(private readonly ctx: TableContext) {
    this.period = tagPeriodOf(ctx.options);
    this.snapshots = new SnapshotManager(ctx.fileIO, ctx.paths);
    this.tags = new TagManager(ctx.fileIO, ctx.paths);
  }

  /** Whether `name` is an automatic tag name of this table's period. */
  isAutoTag(name: string): boolean {
    return this.period.tagToTime(name) !== null;
  }

  /** Creates the tags of every period boundary crossed since the last automatic tag; returns them. */
  async run(options: TagAutoCreationRunOptions = {}): Promise<AutoTagEvent[]> {
    if (this.lastTagTime === undefined) await this.load();
    const created: AutoTagEvent[] = [];
    const upper = options.created?.id ?? (await this.snapshots.latestId());
    // Snapshots read by this run (the committed one given): each is read once however many tags it takes.
    const cache = new Map<number, Snapshot | null>(options.created ? [[options.created.id, options.created]] : []);
    while (upper !== null && this.scanFrom <= upper && created.length < MAX_TAGS_PER_RUN) {
      const found = await this.firstCrossing(upper, cache);
      if (found === null) break;
      const time = snapshotTagTime(this.ctx, found)!;
      // tag.automatic-completion: the period after the last tag, even when later periods ended too.
      const last = this.lastTagTime ?? null;
      const thisTag =
        this.ctx.options.tagAutomaticCompletion && last !== null ? last + this.period.periodMs : this.period.normalizeToPreviousTag(time);
      const name = this.period.timeToTag(thisTag);
      const retained = this.ctx.options.tagDefaultTimeRetainedMs;
      const tag = tagOf(found, retained === null ? undefined : tagDurationOf(retained), (options.now ?? Date.now)());
      const wrote =
        options.dryRun === true
          ? !(await this.tags.exists(name))
          : (await writeTag(this.ctx.fileIO, this.ctx.paths, name, tag)) === 'created';
      if (wrote) created.push({ name, snapshotId: found.id });
      this.lastTagTime = thisTag;
      this.scanFrom = found.id + 1;
    }
    if (upper !== null && this.scanFrom <= upper) this.scanFrom = upper + 1;
    return created;
  }

  /** Java's start: after the automatic tag of the latest period, else at the earliest snapshot. */
  private async load(): Promise<void> {
    let best: { name: string; time: number } | null = null;
    for await (const name of this.tags.listNames()) {
      const time = this.period.tagToTime(name);
      if (time !== null && (best === null || time > best.time)) best = { name, time };
    }
    const tag = best === null ? null : await this.tags.tryGet(best.name);
    if (best === null || tag === null) {
      this.lastTagTime = null;
      this.scanFrom = (await this.snapshots.earliestId()) ?? 1;
    } else {
      this.lastTagTime = best.time;
      this.scanFrom = tag.id + 1;
    }
  }

  /** Whether `s` is the snapshot of the next automatic tag (by its time). */
  private crosses(s: Snapshot): boolean {
    const time = snapshotTagTime(this.ctx, s);
    if (time === null) return false;
    if (this.lastTagTime === null || this.lastTagTime === undefined) return true;
    return time - this.ctx.options.tagCreationDelayMs >= this.lastTagTime + 2 * this.period.periodMs;
  }

  /**
   * The first snapshot in [scanFrom, upper] that {@link crosses}, or null (scanFrom then moves past
   * upper). Times grow with ids, so when `upper` does not cross, none below does; otherwise the
   * search gallops forward from scanFrom (1, 2, 4, … snapshots) and halves the last step, so a tag
   * costs reads in the logarithm of the snapshots since the previous one, not one read each. A
   * snapshot that expired during the search restarts it at the new earliest snapshot (Java's scan
   * also moves to the earliest one), so the period still gets its tag.
   */
  private async firstCrossing(upper: number, cache: Map<number, Snapshot | null>): Promise<Snapshot | null> {
    for (;;) {
      const found = await this.searchCrossing(upper, cache);
      if (found !== 'expired') return found;
      const earliest = await this.snapshots.earliestId();
      // Expiration only moves the earliest snapshot forward: each restart starts later.
      if (earliest === null || earliest <= this.scanFrom || earliest > upper) return null;
      this.scanFrom = earliest;
    }
  }

  /** One search of {@link firstCrossing}; 'expired' when a snapshot it needed is gone. */
  private async searchCrossing(upper: number, cache: Map<number, Snapshot | null>): Promise<Snapshot | null | 'expired'> {
    const get = async (id: number): Promise<Snapshot | null> => {
      if (!cache.has(id)) cache.set(id, await this.snapshots.tryGet(id));
      return cache.get(id)!;
    };
    const top = await get(upper);
    if (top === null || !this.crosses(top)) {
      this.scanFrom = upper + 1;
      return null;
    }
    let lo = this.scanFrom;
    let first = await get(lo);
    if (first === null) {
      // Expired meanwhile (or never there): start at the earliest snapshot.
      lo = Math.max(lo, (await this.snapshots.earliestId()) ?? upper);
      first = await get(lo);
      if (first === null) return 'expired';
    }
    if (this.crosses(first)) return first;
    // Invariant: lo does not cross, hi does.
    let hi = upper;
    let hiSnapshot = top;
    for (let step = 1; lo + step < hi; step *= 2) {
      const s = await get(lo + step);
      if (s === null) return 'expired';
      if (this.crosses(s)) {
        hi = lo + step;
        hiSnapshot = s;
        break;
      }
      lo += step;
    }
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const s = await get(mid);
      if (s === null) return 'expired';
      if (this.crosses(s)) {
        hi = mid;
        hiSnapshot = s;
      } else lo = mid;
    }
    return hiSnapshot;
  }
}
