/**
 * Re-planning a dynamic-bucket write whose bucket assignment went stale before its commit: another
 * writer placed one of its new keys elsewhere, an overwrite replaced a partition's hash index, or
 * the snapshot the assignment read expired. The commit is refused with nothing visible and the
 * data files deleted; writing the rows again assigns them against the new latest snapshot.
 */
import type { CoreOptions } from '../core-options.js';
import { retryWaitMs, sleep } from '../commit/commit-retry.js';
import { DynamicBucketConflictError } from '../commit/index-changes.js';

/**
 * Runs `attempt` (which writes its rows from the start and commits them) again while it fails with
 * a {@link DynamicBucketConflictError}, at most `commit.max-retries` more times, waiting Java's
 * commit backoff (`commit.min-retry-wait` doubling up to `commit.max-retry-wait`) in between.
 * Any other error, and the last conflict, is thrown.
 *
 * @param attempt called with the re-plan number (0 for the first attempt).
 */
export async function replanOnBucketConflict<T>(
  options: Pick<CoreOptions, 'commitMaxRetries' | 'commitMinRetryWaitMs' | 'commitMaxRetryWaitMs'>,
  attempt: (replan: number) => Promise<T>,
): Promise<T> {
  for (let replan = 0; ; replan++) {
    try {
      return await attempt(replan);
    } catch (e) {
      if (!(e instanceof DynamicBucketConflictError) || replan >= options.commitMaxRetries) throw e;
      await sleep(retryWaitMs(replan, options.commitMinRetryWaitMs, options.commitMaxRetryWaitMs));
    }
  }
}
