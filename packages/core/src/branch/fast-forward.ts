/**
 * Fast-forward (Java's `FileSystemBranchManager.fastForward`): the current branch (usually main)
 * takes the history of another branch from that branch's earliest snapshot `E` on. What Java
 * does, and so what this does: delete the target's snapshots from `E` on, its schemas from the
 * schema of snapshot `E` on and its tags of snapshots from `E` on, delete its LATEST hint, then
 * copy every snapshot, schema and tag file of the branch into the target's directories. The
 * branch itself stays. Data files are shared, so nothing but metadata moves; files only the
 * replaced snapshots used become orphans.
 *
 * Java deletes and copies in no particular order; here the order keeps the target readable after
 * a crash at any point, and a rerun finishes the job:
 *
 * 1. LATEST (and EARLIEST when it points at `E` or later) hints go first, so no reader trusts a hint into the range.
 * 2. Snapshots from `E` on, newest first: the target stays a contiguous chain ending below `E`.
 * 3. Tags of snapshots from `E` on (before any schema they may use disappears).
 * 4. Long-lived changelogs from `E` on (Java keeps them; they describe the history being replaced).
 * 5. Schemas above the schema of `E`, newest first (no remaining snapshot or tag uses them).
 * 6. The branch's schemas, oldest first (overwriting equal copies up to the schema of `E`).
 * 7. The branch's snapshots, oldest first, each with create-if-absent: a writer that committed
 *    to the target meanwhile makes the fast-forward fail instead of being overwritten.
 * 8. The branch's tags, then the hints.
 * 9. Stream consumers of the target past `E` move back to `E` (to `E + 1` when snapshot `E` was
 *    the same file on both sides), as Java does not: they would skip the branch's snapshots that
 *    took the replaced ids.
 *
 * Like Java, stop writers of the target while it runs.
 */
import type { FileIO } from '@tidemark/storage';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import type { FileStorePathFactory } from '../path-factory.js';
import { SchemaManager } from '../schema-manager.js';
import { SnapshotManager, readHint } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import { BranchStateError, InvalidBranchNameError } from './branch-errors.js';
import { checkBranchReference, isMainBranch } from './branch-names.js';

/** Options of {@link fastForwardBranch}. */
export interface FastForwardOptions {
  /** Change nothing; the result says what would be removed and copied. */
  readonly dryRun?: boolean;
}

/** What a fast-forward changed (or would change). */
export interface FastForwardResult {
  /** The branch whose history was taken. */
  readonly branch: string;
  /** The branch that took it (the manager's current branch). */
  readonly target: string;
  /** The branch's earliest snapshot: the target's history from here on is the branch's. */
  readonly fromSnapshotId: number;
  /** Snapshot ids of the target that were replaced or dropped, newest first. */
  readonly removedSnapshots: readonly number[];
  /** Tags of the target on snapshots from {@link fromSnapshotId} on. */
  readonly removedTags: readonly string[];
  /** Schema ids of the target above the schema of {@link fromSnapshotId}. */
  readonly removedSchemas: readonly number[];
  /** Long-lived changelogs of the target from {@link fromSnapshotId} on. */
  readonly removedChangelogs: number;
  /**
   * Stream consumers of the target whose next snapshot lay past {@link fromSnapshotId}: moved back
   * to it (past it when the target had that very snapshot), so that they read the branch's
   * snapshots, which took the replaced ids (Java leaves them, and they then skip those).
   */
  readonly movedConsumers: readonly string[];
  /** Snapshot ids copied from the branch, oldest first. */
  readonly copiedSnapshots: readonly number[];
  readonly copiedSchemas: readonly number[];
  readonly copiedTags: readonly string[];
  /** The target's latest snapshot afterwards. */
  readonly latestSnapshotId: number;
  readonly dryRun: boolean;
}

/**
 * What a fast-forward needs of the table's branches (`BranchManager` is one): an interface here,
 * so that this module and the manager that calls it do not import each other.
 */
export interface FastForwardBranches {
  /** The branch that takes the other branch's snapshots (usually main). */
  readonly current: string;
  readonly fileIO: FileIO;
  readonly paths: FileStorePathFactory;
  /** The metadata paths of branch `name`. */
  pathsOf(name: string): FileStorePathFactory;
  /** Throws BranchNotFoundError unless branch `name` exists. */
  check(name: string): Promise<void>;
}

/**
 * Fast-forwards `manager.current` to branch `name` (see the module documentation).
 *
 * @throws InvalidBranchNameError for `main` or the current branch as source; BranchNotFoundError;
 *   BranchStateError when the branch has no snapshot, or a snapshot appeared in the target meanwhile.
 */
export async function fastForwardBranch(
  manager: FastForwardBranches,
  name: string,
  options: FastForwardOptions = {},
): Promise<FastForwardResult> {
  checkBranchReference(name);
  if (isMainBranch(name)) throw new InvalidBranchNameError(`branch 'main' cannot be fast-forwarded into another branch`);
  if (name === manager.current) throw new InvalidBranchNameError(`cannot fast-forward branch '${name}' into itself`);
  await manager.check(name);
  const io = manager.fileIO;
  const target = manager.paths;
  const source = manager.pathsOf(name);

  const sourceSnapshots = new SnapshotManager(io, source);
  const chain = await sourceSnapshots.sortedIds();
  const from = chain[0];
  if (from === undefined)
    throw new BranchStateError(`branch '${name}' has no snapshot: there is nothing to fast-forward to (commit to it first)`);
  const fromSchema = (await sourceSnapshots.snapshot(from)).schemaId;

  const targetSnapshots = new SnapshotManager(io, target);
  const targetIds: number[] = [];
  for await (const id of targetSnapshots.listIds()) targetIds.push(id);
  const removedSnapshots = targetIds.filter((id) => id >= from).sort((a, b) => b - a);
  const targetEarliest = await targetSnapshots.earliestId();
  const keepsOlder = targetEarliest !== null && targetEarliest < from;
  const removedTags = (await new TagManager(io, target).list()).filter((t) => t.tag.id >= from).map((t) => t.name);
  const removedSchemas = (await new SchemaManager(io, target).listIds()).filter((id) => id > fromSchema).reverse();
  const changelogs = new ChangelogManager(io, target);
  const removedChangelogs: number[] = [];
  for await (const id of changelogs.listIds()) if (id >= from) removedChangelogs.push(id);
  const copiedSchemas = await new SchemaManager(io, source).listIds();
  // Consumers resume at the first snapshot that differs: `from` itself is usually the target's own
  // snapshot (the branch was made from a tag of it), which they have read already.
  const resumeAt = (await sameFile(io, target.snapshotPath(from), source.snapshotPath(from))) ? from + 1 : from;
  const consumers = new ConsumerManager(io, target);
  const movedConsumers = await consumers.idsPast(resumeAt);
  const copiedTags = await new TagManager(io, source).names();
  const latest = chain[chain.length - 1]!;
  const result: FastForwardResult = {
    branch: name,
    target: manager.current,
    fromSnapshotId: from,
    removedSnapshots,
    removedTags,
    removedSchemas,
    removedChangelogs: removedChangelogs.length,
    movedConsumers,
    copiedSnapshots: chain,
    copiedSchemas,
    copiedTags,
    latestSnapshotId: latest,
    dryRun: options.dryRun === true,
  };
  if (options.dryRun) return result;

  // 1. Hints that could point into the replaced range.
  await io.delete(target.latestHint);
  const earliestHint = await readHint(io, target.earliestHint);
  if (earliestHint === null || earliestHint >= from) await io.delete(target.earliestHint);
  // 2.-5. The target's history from `from` on, newest first.
  for (const id of removedSnapshots) await io.delete(target.snapshotPath(id));
  await io.deleteMany(removedTags.map((t) => target.tagPath(t)));
  if (removedChangelogs.length > 0) {
    await io.delete(target.changelogLatestHint);
    for (const id of removedChangelogs.sort((a, b) => b - a)) await io.delete(target.changelogMetaPath(id));
  }
  for (const id of removedSchemas) await io.delete(target.schemaPath(id));
  // 6.-8. The branch's files, oldest first.
  for (const id of copiedSchemas) await io.write(target.schemaPath(id), await io.read(source.schemaPath(id)));
  for (const id of chain) {
    const created = await io.createIfAbsent(target.snapshotPath(id), await io.read(source.snapshotPath(id)));
    if (created === 'already-exists') {
      throw new BranchStateError(
        `snapshot ${id} of branch '${manager.current}' was written while fast-forwarding it to '${name}': stop its writers and run the fast-forward again`,
      );
    }
  }
  for (const t of copiedTags) await io.write(target.tagPath(t), await io.read(source.tagPath(t)));
  try {
    await io.write(target.latestHint, String(latest));
    if (!keepsOlder) await io.write(target.earliestHint, String(from));
  } catch {
    // Hints are best effort; the snapshot files are the truth.
  }
  // 9. Consumers that had read into the replaced history.
  for (const id of movedConsumers) await consumers.resetConsumer(id, resumeAt);
  return result;
}

/** Whether both files exist with the same bytes. */
async function sameFile(io: FileIO, a: string, b: string): Promise<boolean> {
  const read = (p: string): Promise<Uint8Array | null> => io.read(p).catch(() => null);
  const [x, y] = await Promise.all([read(a), read(b)]);
  return x !== null && y !== null && x.length === y.length && x.every((v, i) => v === y[i]);
}
