/**
 * Backoff between commit attempts. {@link retryWaitMs} is Java Paimon's rule
 * (`min(minWait · 2^retry, maxWait)` plus up to 20% jitter, from `commit.min-retry-wait` /
 * `commit.max-retry-wait`); {@link RetryBackoff} is what the committer uses: the same bounds,
 * but full jitter scaled by how long a commit's contended window lasts on this store.
 */

/** Milliseconds to wait before retry number `retry` (0-based). */
export function retryWaitMs(retry: number, minWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const base = Math.min(minWaitMs * 2 ** Math.min(retry, 30), maxWaitMs);
  return base + Math.floor(base * 0.2 * random());
}

/**
 * Adaptive backoff of one committer. Two writers that lost to the same winner re-read the table at
 * about the same moment and would collide again; how far apart they must start depends on how long
 * the window between reading the latest snapshot and creating the next one is, which ranges from
 * about a millisecond on local disk to tens of milliseconds on an object store. So the wait is
 * drawn uniformly from `[0, min(maxWait, max(minWait, window) · 2^min(retry, 2))]` ("full
 * jitter"), where `window` is a moving average of this committer's winning windows: the losers
 * spread over about one window on the first retry and over four when they keep colliding.
 *
 * Why so tight: a lost race means a winner has just created its snapshot, so the next id is free
 * from now on, and the loser first spends a few round trips reading the winner's snapshot anyway
 * (prefetch). Waiting longer only leaves the table idle while every loser sleeps.
 * Why winning windows only: lost attempts are long by selection (the longer a window, the likelier
 * another writer takes the id inside it), and on a loaded machine a few slow ones would inflate
 * the scale, hence every later wait, many times over. Until a first win, lost windows seed it.
 */
export class RetryBackoff {
  /** Moving average of winning windows in ms (null until the first is measured). */
  private windowMs: number | null = null;
  private fromWins = false;

  constructor(
    private readonly minWaitMs: number,
    private readonly maxWaitMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records the window of an attempt that created its snapshot. */
  succeeded(windowMs: number): void {
    if (!this.fromWins) this.windowMs = null;
    this.fromWins = true;
    this.observe(windowMs);
  }

  /** Records a lost attempt (retry number `retry`, 0-based) and returns how long to wait before the next. */
  lost(retry: number, windowMs: number): number {
    if (!this.fromWins) this.observe(windowMs);
    const scale = Math.max(this.minWaitMs, this.windowMs ?? this.minWaitMs);
    const cap = Math.min(this.maxWaitMs, scale * 2 ** Math.min(retry, MAX_DOUBLINGS));
    return Math.floor(cap * this.random());
  }

  private observe(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.windowMs = this.windowMs === null ? ms : 0.8 * this.windowMs + 0.2 * ms;
  }
}

/** Doublings of the backoff unit after repeated losses (so at most 4 windows). */
const MAX_DOUBLINGS = 2;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Awaits every promise (undefined entries count as done) and then throws the first rejection, if
 * any. Unlike `Promise.all`, nothing is still running when it throws, so a clean-up after a failure
 * cannot race an upload that is still in flight.
 */
export async function settleAll<T extends readonly unknown[]>(promises: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(promises);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
