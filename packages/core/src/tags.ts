/**
 * Creating, deleting and listing tags (`tag/tag-<name>`, docs/format.md, "Time travel and tags"). A tag file is the
 * tagged snapshot's JSON, plus `tagCreateTime` and `tagTimeRetained` when the tag has a retention
 * (as Java writes it); it is created with create-if-absent so two writers cannot overwrite each
 * other's tag. Reading tags (and time travel by tag) is {@link TagManager}.
 */
import type { FileIO } from '@tidemark/storage';
import { serializeTag, type Snapshot, type Tag, type TagDuration } from '@tidemark/format';
import { SnapshotNotFoundError, TagNotFoundError } from './errors.js';
import { SnapshotManager } from './snapshot-manager.js';
import type { TablePaths } from './table-paths.js';
import { TagManager } from './tag-manager.js';
import { CommitInputError, TagAlreadyExistsError } from './commit/commit-errors.js';

/** Options of {@link createTag}. */
export interface CreateTagOptions {
  /** Snapshot to tag; default the latest. */
  readonly snapshotId?: number;
  /**
   * `tagTimeRetained`: how long the tag should be kept after creation (expired by `tidemark
   * maintain` and by commits of tables with automatic tags). Without it the tag file has no
   * `tagCreateTime` either, as in Java.
   */
  readonly timeRetained?: TagDuration;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** Java's rules: not blank, not purely numeric (would be ambiguous with snapshot ids), no path separators. */
export function validateTagName(name: string): void {
  if (typeof name !== 'string' || name.trim() === '') throw new CommitInputError('tag name must not be blank');
  if (/^\d+$/.test(name)) throw new CommitInputError(`tag name cannot be a pure number, but is '${name}'`);
  if (name.includes('/') || name.includes('\\')) throw new CommitInputError(`tag name '${name}' must not contain '/' or '\\'`);
  if (name.startsWith('.')) throw new CommitInputError(`tag name '${name}' must not start with '.'`);
}

/** The writer's local wall-clock time stored as if UTC, like Java's `LocalDateTime.now()`. */
function localNow(nowMs: number): { millis: number; nanoOfMillis: number } {
  const offsetMin = new Date(nowMs).getTimezoneOffset();
  return { millis: nowMs - offsetMin * 60_000, nanoOfMillis: 0 };
}

/** A retention in milliseconds as a tag's `tagTimeRetained`. */
export function tagDurationOf(ms: number): TagDuration {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

/**
 * The tag of `snapshot` as Java's `TagManager` writes it: the snapshot JSON alone, or, with a
 * retention, plus `tagCreateTime` (now, local wall clock) and `tagTimeRetained`. Java leaves the
 * creation time out without a retention, so that Paimon 0.7 readers can still read the tag.
 */
export function tagOf(snapshot: Snapshot, timeRetained: TagDuration | undefined, nowMs: number): Tag {
  return timeRetained === undefined ? { ...snapshot } : { ...snapshot, tagCreateTime: localNow(nowMs), tagTimeRetained: timeRetained };
}

/**
 * Writes tag `name` of `snapshot` with create-if-absent, without validating the name (automatic
 * tags may be numeric, e.g. `20240305`). `exists` when a tag of that name is already there.
 */
export async function writeTag(fileIO: FileIO, paths: TablePaths, name: string, tag: Tag): Promise<'created' | 'exists'> {
  const result = await fileIO.createIfAbsent(paths.tagPath(name), serializeTag(tag));
  return result === 'already-exists' ? 'exists' : 'created';
}

/**
 * Creates tag `name` for a snapshot (latest by default).
 *
 * @returns the tag as written.
 * @throws TagAlreadyExistsError when a tag of that name exists.
 * @throws SnapshotNotFoundError when the snapshot does not exist (or the table has none).
 */
export async function createTag(fileIO: FileIO, paths: TablePaths, name: string, options: CreateTagOptions = {}): Promise<Tag> {
  validateTagName(name);
  const snapshots = new SnapshotManager(fileIO, paths);
  let snapshot;
  if (options.snapshotId !== undefined) snapshot = await snapshots.snapshotInChain(options.snapshotId);
  else {
    snapshot = await snapshots.latest();
    if (snapshot === null) throw new SnapshotNotFoundError(1, null, null);
  }
  const tag = tagOf(snapshot, options.timeRetained, (options.now ?? Date.now)());
  if ((await writeTag(fileIO, paths, name, tag)) === 'exists') {
    const existing = await new TagManager(fileIO, paths).tryGet(name).catch(() => null);
    throw new TagAlreadyExistsError(name, existing?.id ?? null);
  }
  return tag;
}

/**
 * Deletes tag `name`. Files kept alive only by this tag (its snapshot already expired) are left
 * for orphan-file cleanup.
 *
 * @throws TagNotFoundError when the tag does not exist.
 */
export async function deleteTag(fileIO: FileIO, paths: TablePaths, name: string): Promise<void> {
  const tags = new TagManager(fileIO, paths);
  if (!(await tags.exists(name))) {
    const all = await tags.names();
    throw new TagNotFoundError(name, all.slice(0, 10), all.length);
  }
  await fileIO.delete(paths.tagPath(name));
}

/** All tags with their snapshots, ordered by snapshot id then name. */
export function listTags(fileIO: FileIO, paths: TablePaths): Promise<Array<{ name: string; tag: Tag }>> {
  return new TagManager(fileIO, paths).list();
}
