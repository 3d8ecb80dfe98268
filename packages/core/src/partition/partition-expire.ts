/**
 * Partition expiration as Paimon defines it (`PartitionExpire` with its `values-time` and
 * `update-time` strategies): a partition whose time is older than `partition.expiration-time` is
 * dropped with the drop-partition commit (drop-partitions.ts). The steps:
 *
 * 1. {@link partitionExpireSettings}: the table options, overridden by the caller;
 * 2. the partitions of the latest snapshot (`listPartitionEntries`);
 * 3. {@link selectExpiredPartitions}: each partition's time by the strategy, compared with
 *    now − expiration time; a value the formatter cannot parse is skipped with a warning naming
 *    it, never dropped on a guess;
 * 4. {@link limitExpired}: Paimon's order (partition values joined with `,`, sorted as strings)
 *    and `partition.expiration-max-num`;
 * 5. the drop commit(s).
 *
 * Committers run it after commits at most once per `partition.expiration-check-interval`
 * ({@link PartitionExpireState}, Java's in-memory `lastCheck`).
 */
import { BATCH_COMMIT_IDENTIFIER, partitionValueStrings, type DataType, type ManifestEntry } from '@tidemark/format';
import { partitionKey } from '../commit/manifest-fold.js';
import { TidemarkUserError } from '../errors.js';
import type { PartitionExpireStrategy } from '../core-options.js';
import { MaintenanceArgumentError } from '../expire/maintenance-errors.js';
import { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import { parseDefaultPartitionTime, type DatePattern } from './date-pattern.js';
import { commitPartitionDrop, droppedPartition, type DropPartitionsSummary, type DroppedPartition } from './drop-partitions.js';
import { epochToLocalMillis, listPartitionEntries, localToEpochMillis, type PartitionEntry } from './partition-entries.js';

/**
 * `update-time` expiration refused to drop a partition that a writer added a file to after it was
 * judged expired (see {@link expirePartitions}); nothing of that drop was committed. Run it again.
 */
export class PartitionChangedError extends TidemarkUserError {}

/** Settings of {@link expirePartitions}; unset values come from the table options. */
export interface ExpirePartitionsOptions {
  /** Expire partitions older than this (ms); default `partition.expiration-time` (required then). */
  readonly expirationTimeMs?: number;
  /** Default `partition.expiration-strategy`. */
  readonly strategy?: PartitionExpireStrategy;
  /** Default `partition.expiration-max-num`. */
  readonly maxExpires?: number;
  /** Plan only: list what would be dropped. */
  readonly dryRun?: boolean;
  /** Commit user of the drop snapshot(s); default a fresh UUID. */
  readonly commitUser?: string;
  /** Clock (tests); also the drop snapshots' time. */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
  /** Where the warning about each partition skipped (time unknown) goes; default the table's logger. */
  readonly logger?: { warn(message: string): void };
}

/** The resolved settings of a run. */
export interface PartitionExpireSettings {
  readonly expirationTimeMs: number;
  readonly strategy: PartitionExpireStrategy;
  readonly maxExpires: number;
  readonly batchSize: number | null;
  readonly formatter: DatePattern | null;
  readonly pattern: string | null;
  readonly defaultName: string;
  readonly legacyName: boolean;
}

/** An expired partition with the time it was judged by. */
export interface ExpiredPartition extends DroppedPartition {
  /**
   * `values-time`: the time read from the partition values (local wall clock, ISO without zone);
   * `update-time`: the creation time of its newest file (UTC ISO).
   */
  readonly time: string;
}

/** A partition whose time could not be determined: never dropped. */
export interface SkippedPartition {
  readonly partition: string;
  readonly reason: string;
}

/** What {@link expirePartitions} did (or would do, in a dry run). */
export interface ExpirePartitionsSummary extends Omit<DropPartitionsSummary, 'partitions'> {
  readonly strategy: PartitionExpireStrategy;
  readonly expirationTimeMs: number;
  /**
   * The threshold: `values-time` compares partition times (local wall clock, ISO without zone),
   * `update-time` file creation times (UTC ISO) with it.
   */
  readonly expireBefore: string;
  readonly partitions: readonly ExpiredPartition[];
  /** Expired partitions left for a later run by `partition.expiration-max-num`. */
  readonly deferred: number;
  readonly skipped: readonly SkippedPartition[];
}

/**
 * Step 1: the table's partition-expiration options with the caller's overrides.
 *
 * @throws MaintenanceArgumentError when no expiration time is given or set, or the table is unpartitioned.
 * @throws InvalidOptionError for a bad table option.
 */
export function partitionExpireSettings(ctx: TableContext, options: ExpirePartitionsOptions = {}): PartitionExpireSettings {
  const o = ctx.options;
  if (ctx.schema.partitionKeys.length === 0)
    throw new MaintenanceArgumentError(`table ${ctx.location} is not partitioned: it has no partitions to expire`);
  const expirationTimeMs = options.expirationTimeMs ?? o.partitionExpirationTimeMs;
  if (expirationTimeMs === null) {
    throw new MaintenanceArgumentError(
      `table ${ctx.location} does not set 'partition.expiration-time': give an expiration time (e.g. --expiration-time 30d) or set the option`,
    );
  }
  if (!Number.isFinite(expirationTimeMs) || expirationTimeMs < 0)
    throw new MaintenanceArgumentError(`expiration time must be a non-negative duration, got ${expirationTimeMs} ms`);
  const maxExpires = options.maxExpires ?? o.partitionExpirationMaxNum;
  if (!Number.isSafeInteger(maxExpires) || maxExpires < 1)
    throw new MaintenanceArgumentError(`max expires must be a positive integer, got ${maxExpires}`);
  const strategy = options.strategy ?? o.partitionExpirationStrategy;
  return {
    expirationTimeMs,
    strategy,
    maxExpires,
    batchSize: o.partitionExpirationBatchSize,
    formatter: strategy === 'values-time' ? o.partitionTimestampFormatter : null,
    pattern: o.partitionTimestampPattern,
    defaultName: o.partitionDefaultName,
    legacyName: o.partitionLegacyName,
  };
}

/** A partition's time, or why it has none. */
type PartitionTime = { readonly time: number } | { readonly skip: string };

/**
 * `values-time`: the timestamp string is the first partition value, or `partition.timestamp-pattern`
 * with each `$key` replaced by its value, parsed with `partition.timestamp-formatter` (a
 * date-time, else a date at midnight) or Java's default `yyyy-MM-dd[ HH:mm:ss]`.
 */
export function partitionValuesTime(
  keys: readonly string[],
  values: readonly (string | null)[],
  s: PartitionExpireSettings,
): PartitionTime {
  // Java reads every value the pattern loop touches (all with a pattern, the first without): a NULL there cannot be expired.
  if (s.pattern === null ? values[0] === null : values.some((v) => v === null)) {
    return { skip: `it has a NULL partition value; drop it with 'tidemark drop-partition' or use the 'update-time' strategy` };
  }
  let text = s.pattern === null ? values[0]! : s.pattern;
  if (s.pattern !== null) keys.forEach((k, i) => (text = text.split(`$${k}`).join(values[i]!)));
  const time = s.formatter !== null ? s.formatter.parse(text) : parseDefaultPartitionTime(text);
  if (time === null) {
    const how =
      s.formatter !== null ? `'partition.timestamp-formatter' = '${s.formatter.pattern}'` : "the default format 'yyyy-MM-dd[ HH:mm:ss]'";
    return {
      skip:
        `cannot read a time from '${text}' with ${how}; check the expiration options, drop it with 'tidemark drop-partition', ` +
        `or use the 'update-time' strategy`,
    };
  }
  return { time };
}

/** Step 3: the expired partitions and the skipped ones (time unknown). `nowMs`: epoch milliseconds. */
export function selectExpiredPartitions(
  ctx: TableContext,
  entries: readonly PartitionEntry[],
  s: PartitionExpireSettings,
  nowMs: number,
): { expired: Array<{ entry: PartitionEntry; time: string }>; skipped: SkippedPartition[]; expireBefore: string } {
  const keys = ctx.schema.partitionKeys;
  const expired: Array<{ entry: PartitionEntry; time: string }> = [];
  const skipped: SkippedPartition[] = [];
  // Java compares LocalDateTimes: now in this machine's zone minus the expiration time.
  const thresholdLocal = epochToLocalMillis(nowMs) - s.expirationTimeMs;
  if (s.strategy === 'update-time') {
    const threshold = localToEpochMillis(thresholdLocal);
    for (const e of entries) {
      if (e.lastFileCreationTime === null) skipped.push({ partition: e.path, reason: 'a file of it has no creation time' });
      else if (threshold > e.lastFileCreationTime) expired.push({ entry: e, time: new Date(e.lastFileCreationTime).toISOString() });
    }
    return { expired, skipped, expireBefore: new Date(threshold).toISOString() };
  }
  const types = partitionTypes(ctx);
  for (const e of entries) {
    const values = partitionValueStrings(keys, types, ctx.paths.partitionValues(e.partition), { legacyName: s.legacyName });
    const t = partitionValuesTime(keys, values, s);
    if ('skip' in t) skipped.push({ partition: e.path, reason: t.skip });
    else if (thresholdLocal > t.time) expired.push({ entry: e, time: localIso(t.time) });
  }
  return { expired, skipped, expireBefore: localIso(thresholdLocal) };
}

/**
 * Step 4: Paimon's order and limit: each partition's values (NULL as `partition.default-name`)
 * joined with `,`, sorted as strings, the first `maxExpires` kept.
 */
export function limitExpired<T extends { entry: PartitionEntry }>(
  ctx: TableContext,
  expired: readonly T[],
  s: PartitionExpireSettings,
): T[] {
  const keys = ctx.schema.partitionKeys;
  const types = partitionTypes(ctx);
  const keyed = expired.map((x) => ({
    x,
    key: partitionValueStrings(keys, types, ctx.paths.partitionValues(x.entry.partition), { legacyName: s.legacyName })
      .map((v) => v ?? s.defaultName)
      .join(','),
  }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.slice(0, s.maxExpires).map((k) => k.x);
}

/**
 * Expires partitions of the latest snapshot (see the module comment). Partitions whose time
 * cannot be read are reported through the logger and in `skipped`, and left alone.
 *
 * @throws MaintenanceArgumentError when the expiration time is missing or the table is unpartitioned.
 * @throws InvalidOptionError for a bad table option.
 */
export async function expirePartitions(ctx: TableContext, options: ExpirePartitionsOptions = {}): Promise<ExpirePartitionsSummary> {
  const s = partitionExpireSettings(ctx, options);
  const now = (options.now ?? Date.now)();
  const latest = await new SnapshotManager(ctx.fileIO, ctx.paths).latest();
  const entries = latest === null ? [] : await listPartitionEntries(ctx, latest, options);
  const { expired, skipped, expireBefore } = selectExpiredPartitions(ctx, entries, s, now);
  const logger = options.logger ?? ctx.logger;
  for (const k of skipped) logger.warn(`partition expiration of ${ctx.location}: partition '${k.partition}' is skipped: ${k.reason}`);
  const chosen = limitExpired(ctx, expired, s);
  const verify = s.strategy === 'update-time' ? unchangedSincePlan(ctx, chosen) : undefined;
  const drop = await commitPartitionDrop(
    ctx,
    latest,
    chosen.map((x) => x.entry),
    { ...options, batchSize: s.batchSize, ...(verify ? { verify } : {}) },
  );
  return {
    ...drop,
    strategy: s.strategy,
    expirationTimeMs: s.expirationTimeMs,
    expireBefore,
    partitions: chosen.map((x) => ({ ...droppedPartition(x.entry), time: x.time })),
    deferred: expired.length - chosen.length,
    skipped,
  };
}

/**
 * `update-time`: a partition was judged by its newest file; one a writer added since (a file
 * created after that, or without a creation time) makes it recent, so the drop, which deletes the
 * partition's files as they are at commit time, must not go ahead. Java has the same window and
 * drops the new file with the rest.
 */
function unchangedSincePlan(ctx: TableContext, chosen: ReadonlyArray<{ entry: PartitionEntry }>): (live: readonly ManifestEntry[]) => void {
  const planned = new Map(chosen.map(({ entry }) => [partitionKey(entry.partition), entry]));
  return (live) => {
    for (const e of live) {
      const p = planned.get(partitionKey(e.partition));
      if (p === undefined || p.lastFileCreationTime === null) continue;
      const created = e.file.creationTime === null ? null : localToEpochMillis(e.file.creationTime);
      if (created === null || created > p.lastFileCreationTime) {
        throw new PartitionChangedError(
          `partition '${p.path}' of ${ctx.location} got a new file while partition expiration ran (${e.file.fileName}, created ` +
            `${created === null ? 'at an unknown time' : new Date(created).toISOString()}): it is no longer expired by 'update-time'; ` +
            'nothing of this drop was committed (earlier batches were): run the expiration again',
        );
      }
    }
  };
}

function partitionTypes(ctx: TableContext): DataType[] {
  return ctx.schema.partitionKeys.map((k) => ctx.schema.fields.find((f) => f.name === k)!.type);
}

/** A local wall-clock time (held as UTC millis) as ISO without zone, like Java's `LocalDateTime.toString()`. */
function localIso(localMillis: number): string {
  return new Date(localMillis).toISOString().replace(/Z$/, '');
}

/**
 * Java's in-memory `lastCheck` of a committer: the first check is one interval after the state is
 * made, then one per interval; an interval of 0 checks after every commit, and with
 * `end-input.check-partition-expire` a batch commit (identifier Long.MAX) checks at once.
 */
export class PartitionExpireState {
  private lastCheck: number;

  constructor(now: number) {
    this.lastCheck = now;
  }

  /** Whether a commit with `identifier` at `now` runs a check (and if so, records it). */
  due(ctx: TableContext, identifier: bigint | null, now: number): boolean {
    const o = ctx.options;
    if (o.partitionExpirationTimeMs === null || ctx.schema.partitionKeys.length === 0) return false;
    const interval = o.partitionExpirationCheckIntervalMs;
    const endInput = o.endInputCheckPartitionExpire && identifier === BATCH_COMMIT_IDENTIFIER;
    if (interval === 0 || now > this.lastCheck + interval || endInput) {
      this.lastCheck = now;
      return true;
    }
    return false;
  }
}
