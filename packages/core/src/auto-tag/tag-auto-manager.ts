/**
 * Paimon's `TagAutoManager`, `TagTimeExpire` and `TagBatchCreation`: after a commit (and in
 * `tidemark maintain`) the table's automatic tags are created (tag-auto-creation.ts), automatic
 * tags beyond `tag.num-retained-max` are deleted oldest first, and every tag whose
 * `tagCreateTime` + `tagTimeRetained` has passed is deleted. In `batch` mode a batch commit tags
 * its snapshot `batch-write-<date>` (or `tag.batch.customized-name`) instead.
 *
 * Deleting a tag deletes its file only: data files that only the tag kept alive are reclaimed by
 * orphan-file cleanup, as with `tidemark tag delete`.
 */
import { BATCH_COMMIT_IDENTIFIER, type Snapshot, type Tag } from '@tidemark/format';
import { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import { TagManager } from '../tag-manager.js';
import { tagDurationOf, tagOf, writeTag } from '../tags.js';
import { epochToLocalMillis } from '../partition/partition-entries.js';
import { TagAutoCreation, type AutoTagEvent } from './tag-auto-creation.js';
import { tagPeriodOf } from './tag-period.js';

/** What one automatic-tag run did. */
export interface AutoTagSummary {
  readonly created: readonly AutoTagEvent[];
  /** Deleted because more automatic tags than `tag.num-retained-max` existed. */
  readonly expiredByCount: readonly AutoTagEvent[];
  /** Deleted because their `tagTimeRetained` had passed. */
  readonly expiredByTime: readonly AutoTagEvent[];
}

/** Settings of {@link runAutoTags}. */
export interface AutoTagRunOptions {
  /** Clock (tests): retention checks and `tagCreateTime`. */
  readonly now?: () => number;
  /** The snapshot the caller just committed (see {@link TagAutoCreation.run}). */
  readonly created?: Snapshot | null;
  /** Identifier of that commit: `batch` mode tags batch commits (Long.MAX) only. */
  readonly identifier?: bigint | null;
  /**
   * Look for tags to expire by count and by time even when no tag was created (commits look
   * after creating one, and for time every few minutes; `maintain` always looks).
   */
  readonly fullCheck?: boolean;
  /** Report what would be created and deleted without writing or deleting (with {@link fullCheck}). */
  readonly dryRun?: boolean;
}

/** Whether a table's options ask for any automatic tag work. */
export function autoTagsEnabled(ctx: TableContext): boolean {
  return ctx.options.tagAutomaticCreation !== 'none' || ctx.options.tagDefaultTimeRetainedMs !== null;
}

/** Deletes a tag file (not in a dry run); a tag already gone counts as deleted by someone else (false). */
async function removeTag(ctx: TableContext, name: string, dryRun = false): Promise<boolean> {
  const path = ctx.paths.tagPath(name);
  if (!(await ctx.fileIO.exists(path))) return false;
  if (!dryRun) await ctx.fileIO.delete(path);
  return true;
}

/** Settings of the tag expiration functions. */
export interface TagExpireOptions {
  /** Report without deleting. */
  readonly dryRun?: boolean;
  /** Tags a dry run would have created first (newer than every tag on storage): they count towards the maximum. */
  readonly planned?: number;
}

/**
 * Whether `name` is a tag the table's automatic tagging made, so `tag.num-retained-max` may
 * delete it: in `batch` mode `batch-write-<yyyy-MM-dd>` or `tag.batch.customized-name`, else
 * exactly the name of a period (`2024-03-05`, not `2024-03-05 before-migration` nor a date
 * that only parses leniently). Stricter than Java, which counts every tag in `batch` mode and any
 * name that starts with a date for a daily period: a tag a user made is never expired by count
 * (only by the retention written into it).
 */
export function isAutomaticTagName(ctx: TableContext, name: string): boolean {
  if (ctx.options.tagAutomaticCreation === 'batch') {
    return name === ctx.options.tagBatchCustomizedName || /^batch-write-\d{4}-\d{2}-\d{2}$/.test(name);
  }
  const period = tagPeriodOf(ctx.options);
  const time = period.tagToTime(name);
  return time !== null && period.timeToTag(time) === name;
}

/** Tags oldest first: by snapshot id, then name. */
function oldestFirst(tags: Array<{ name: string; tag: Tag }>): Array<{ name: string; tag: Tag }> {
  return tags.sort((a, b) => a.tag.id - b.tag.id || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Deletes the oldest tags beyond `max` among those `select` accepts (the automatic ones: {@link isAutomaticTagName}). */
export async function expireTagsByCount(
  ctx: TableContext,
  max: number,
  select: (name: string) => boolean,
  options: TagExpireOptions = {},
): Promise<AutoTagEvent[]> {
  const tags = oldestFirst((await new TagManager(ctx.fileIO, ctx.paths).list()).filter((t) => select(t.name)));
  const out: AutoTagEvent[] = [];
  for (const { name, tag } of tags.slice(0, Math.max(0, tags.length + (options.planned ?? 0) - max))) {
    if (await removeTag(ctx, name, options.dryRun)) out.push({ name, snapshotId: tag.id });
  }
  return out;
}

/** When a tag with a retention expires, as a local wall-clock time (UTC millis); null without one. */
export function tagExpiresAt(tag: Tag): number | null {
  if (tag.tagCreateTime === undefined || tag.tagTimeRetained === undefined) return null;
  const r = tag.tagTimeRetained;
  return tag.tagCreateTime.millis + r.seconds * 1000 + Math.floor(r.nanos / 1_000_000);
}

/**
 * Paimon's `TagTimeExpire`: deletes every tag (automatic or not) whose `tagCreateTime` +
 * `tagTimeRetained` lies before now (local wall clock, as Java's `LocalDateTime.now()`). Returns
 * the deleted tags and the earliest expiry among the tags kept (epoch ms, or null).
 */
export async function expireTagsByTime(
  ctx: TableContext,
  nowMs: number,
  options: TagExpireOptions = {},
): Promise<{ expired: AutoTagEvent[]; next: number | null }> {
  const nowLocal = epochToLocalMillis(nowMs);
  const expired: AutoTagEvent[] = [];
  let next: number | null = null;
  for (const { name, tag } of await new TagManager(ctx.fileIO, ctx.paths).list()) {
    const at = tagExpiresAt(tag);
    if (at === null) continue;
    if (nowLocal > at) {
      if (await removeTag(ctx, name, options.dryRun)) expired.push({ name, snapshotId: tag.id });
    } else {
      const epoch = nowMs + (at - nowLocal);
      next = next === null ? epoch : Math.min(next, epoch);
    }
  }
  return { expired, next };
}

/**
 * Paimon's `TagBatchCreation`: tags the latest snapshot `batch-write-<yyyy-MM-dd>` (its commit
 * date in this machine's zone) or `tag.batch.customized-name`, replacing a tag of that name, then
 * keeps at most `tag.num-retained-max` batch tags.
 */
export async function createBatchTag(
  ctx: TableContext,
  snapshot: Snapshot,
  nowMs: number,
  options: TagExpireOptions = {},
): Promise<AutoTagSummary> {
  const day = new Date(epochToLocalMillis(snapshot.timeMillis)).toISOString().slice(0, 10);
  const name = ctx.options.tagBatchCustomizedName ?? `batch-write-${day}`;
  const retained = ctx.options.tagDefaultTimeRetainedMs;
  const replaced = await removeTag(ctx, name, options.dryRun);
  const tag = tagOf(snapshot, retained === null ? undefined : tagDurationOf(retained), nowMs);
  const wrote = options.dryRun === true || (await writeTag(ctx.fileIO, ctx.paths, name, tag)) === 'created';
  const created = wrote ? [{ name, snapshotId: snapshot.id }] : [];
  const max = ctx.options.tagNumRetainedMax;
  const planned = options.dryRun === true && !replaced ? 1 : 0;
  const expiredByCount = max === null ? [] : await expireTagsByCount(ctx, max, (n) => isAutomaticTagName(ctx, n), { ...options, planned });
  return { created, expiredByCount, expiredByTime: [] };
}

/**
 * What a committer (or maintenance run) keeps between automatic-tag runs: the creation state,
 * and when a tag can next expire by time (commits look for expired tags only then, or after
 * creating one, or every {@link TIME_CHECK_INTERVAL_MS}).
 */
export class AutoTagState {
  creation: TagAutoCreation | null = null;
  nextTimeCheck = Number.NEGATIVE_INFINITY;
}

/** How often a committer looks for tags expired by time when it knows of none due. */
export const TIME_CHECK_INTERVAL_MS = 10 * 60_000;

/**
 * One automatic-tag run (Paimon's `TagAutoManager.run`): creation, count expiration after a
 * tag was created, time expiration. Does nothing when the table sets none of the options.
 */
export async function runAutoTags(ctx: TableContext, state: AutoTagState, options: AutoTagRunOptions = {}): Promise<AutoTagSummary> {
  const now = (options.now ?? Date.now)();
  const mode = ctx.options.tagAutomaticCreation;
  const dryRun = options.dryRun === true;
  let created: readonly AutoTagEvent[] = [];
  let expiredByCount: readonly AutoTagEvent[] = [];
  if (mode === 'batch') {
    // Batch tags follow batch commits; a maintenance run only expires.
    if (options.identifier === BATCH_COMMIT_IDENTIFIER) {
      const snapshot = options.created ?? (await new SnapshotManager(ctx.fileIO, ctx.paths).latest());
      if (snapshot !== null) ({ created, expiredByCount } = await createBatchTag(ctx, snapshot, now, { dryRun }));
    } else if (options.fullCheck === true && ctx.options.tagNumRetainedMax !== null) {
      expiredByCount = await expireTagsByCount(ctx, ctx.options.tagNumRetainedMax, (n) => isAutomaticTagName(ctx, n), { dryRun });
    }
  } else if (mode !== 'none') {
    state.creation ??= new TagAutoCreation(ctx);
    created = await state.creation.run({ now: () => now, dryRun, ...(options.created !== undefined ? { created: options.created } : {}) });
    const max = ctx.options.tagNumRetainedMax;
    if (max !== null && (created.length > 0 || options.fullCheck === true)) {
      expiredByCount = await expireTagsByCount(ctx, max, (name) => isAutomaticTagName(ctx, name), {
        dryRun,
        planned: dryRun ? created.length : 0,
      });
    }
  }
  let expiredByTime: readonly AutoTagEvent[] = [];
  if (options.fullCheck === true || created.length > 0 || now >= state.nextTimeCheck) {
    const r = await expireTagsByTime(ctx, now, { dryRun });
    expiredByTime = r.expired;
    state.nextTimeCheck = Math.min(r.next ?? Number.POSITIVE_INFINITY, now + TIME_CHECK_INTERVAL_MS);
  }
  return { created, expiredByCount, expiredByTime };
}
