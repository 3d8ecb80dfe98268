/**
 * Automatic snapshot expiration after commits, as Java Paimon does (docs/format.md, "Snapshot expiration"): unless
 * the table option `write-only` is `true`, every commit that created a snapshot is followed by an
 * expiration run with the table's `snapshot.*` options. It is best effort: the commit has already
 * succeeded, so a failed run is logged and the next commit (or a maintenance job) retries it.
 */
import { CoreOptions, OPTION, tableOptions } from '../core-options.js';
import { expireSnapshots, type ExpireSnapshotsSummary } from './expire-snapshots.js';
import type { MaintainedTable } from './table-files.js';

/**
 * Table option: when `true`, commits never expire snapshots (a separate maintenance job, e.g.
 * `tidemark maintain`, does it), as in Paimon. Default `false`.
 */
export const WRITE_ONLY_OPTION = OPTION.WRITE_ONLY;

/** Settings of {@link expireAfterCommit}. */
export interface AutoExpireOptions {
  /** Clock (tests); the committer's clock, so snapshot times and the threshold agree. */
  readonly now?: () => number;
  /** Where a failed run is reported (default `console.warn`). */
  readonly logger?: { warn(message: string): void };
}

/**
 * Whether commits to a table with these options expire snapshots automatically, i.e. whether
 * `write-only` is not `true`.
 *
 * @throws InvalidOptionError when `write-only` is neither `true` nor `false`.
 */
export function autoExpireEnabled(options: CoreOptions | Readonly<Record<string, string>>): boolean {
  const o =
    options instanceof CoreOptions ? options : tableOptions({ options: options as Readonly<Record<string, string>>, primaryKeys: [] });
  return !o.writeOnly;
}

/**
 * Runs {@link expireSnapshots} with the table's options after a successful commit. Never throws:
 * a failure is reported through `logger.warn` and `null` is returned. Safe if interrupted, like
 * every expiration run; the next run finishes the work.
 */
export async function expireAfterCommit(table: MaintainedTable, options: AutoExpireOptions = {}): Promise<ExpireSnapshotsSummary | null> {
  try {
    return await expireSnapshots(table, options.now !== undefined ? { now: options.now } : {});
  } catch (e) {
    const logger = options.logger ?? { warn: (m: string) => console.warn(`[tidemark] ${m}`) };
    const reason = e instanceof Error ? e.message : String(e);
    logger.warn(
      `automatic snapshot expiration after a commit to ${table.paths.root} failed (the commit itself succeeded; ` +
        `the next commit or 'tidemark expire-snapshots' retries): ${reason}`,
    );
    return null;
  }
}

/**
 * What one committer's last expiration run learned, so that the commits after which nothing can
 * expire skip the run and its requests (a full run reads hints, lists consumers and reads
 * snapshots: about ten requests per commit, a third of a small append's cost on an object store).
 *
 * Skipping is conservative: expiration only moves the earliest snapshot forward, so the earliest
 * this committer saw is at most the real one; with fewer snapshots than `snapshot.num-retained.min`
 * after it, or while the snapshot after it is younger than `snapshot.time-retained`, a run could
 * expire nothing (commit times grow with snapshot ids). Tables producing changelog files always
 * run (their retention options interact). A skipped run also defers deleting stale consumer files
 * until a run happens.
 */
export class AutoExpireState {
  private earliest: number | null = null;
  private schemaId: number | null = null;
  /** Epoch ms until which the snapshot after `earliest` is too young for `earliest` to expire. */
  private youngUntil = Number.NEGATIVE_INFINITY;

  /**
   * Whether a run after a commit that created snapshot `latestId` with schema `schemaId` could
   * expire anything, by what earlier runs learned (true when they learned nothing).
   */
  mayExpire(latestId: number, schemaId: number, options: CoreOptions, now: number): boolean {
    if (this.earliest === null || schemaId !== this.schemaId || options.changelogProducer !== 'none') return true;
    if (latestId - options.snapshotNumRetainedMin + 1 <= this.earliest) return false;
    const beyondMax = latestId - options.snapshotNumRetainedMax + 1 > this.earliest;
    return beyondMax || now > this.youngUntil;
  }

  /**
   * Records the outcome of a full run: the earliest snapshot after it (null: none) and the commit
   * time of its successor (null when there is none).
   */
  learn(earliest: number | null, successorTimeMillis: number | null, schemaId: number, options: CoreOptions): void {
    this.earliest = earliest;
    this.schemaId = schemaId;
    this.youngUntil = successorTimeMillis === null ? Number.NEGATIVE_INFINITY : successorTimeMillis + options.snapshotTimeRetainedMs;
  }
}
