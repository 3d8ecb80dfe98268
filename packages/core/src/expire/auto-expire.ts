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
