/**
 * Backoff between commit attempts. {@link retryWaitMs} is Java Paimon's rule
 * (`min(minWait · 2^retry, maxWait)` plus up to 20% jitter, from `commit.min-retry-wait` /
 * `commit.max-retry-wait`); {@link RetryBackoff} is what the committer uses: the same bounds,
 * but full jitter scaled by how long an attempt takes on this store.
 */

/** Milliseconds to wait before retry number `retry` (0-based). */
export function retryWaitMs(retry: number, minWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const base = Math.min(minWaitMs * 2 ** Math.min(retry, 30), maxWaitMs);
  return base + Math.floor(base * 0.2 * random());
}

/**
 * Adaptive backoff of one committer. Two writers that lost to the same winner re-read the table at
 * about the same moment and would collide again; how far apart they must start depends on how long
 * an attempt takes (probe, writes, create), which ranges from about a millisecond on local disk to
 * tens of milliseconds on an object store. So the wait is drawn uniformly from
 * `[0, min(maxWait, max(minWait, attempt) · 2^min(retry, 4))]` ("full jitter"), where `attempt` is
 * a moving average of this committer's attempt durations: the writers spread over about one
 * attempt's time on the first retry and over up to 16 when they keep colliding. The exponent stops
 * there because a slow store already makes the unit large: growing on would only leave the table
 * idle while the losers sleep.
 */
export class RetryBackoff {
  /** Moving average of attempt durations in ms (null until the first attempt is measured). */
  private attemptMs: number | null = null;

  constructor(
    private readonly minWaitMs: number,
    private readonly maxWaitMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records the duration of an attempt that created its snapshot. */
  succeeded(attemptMs: number): void {
    this.observe(attemptMs);
  }

  /** Records a lost attempt (retry number `retry`, 0-based) and returns how long to wait before the next. */
  lost(retry: number, attemptMs: number): number {
    this.observe(attemptMs);
    const scale = Math.max(this.minWaitMs, this.attemptMs ?? this.minWaitMs);
    const cap = Math.min(this.maxWaitMs, scale * 2 ** Math.min(retry, 4));
    return Math.floor(cap * this.random());
  }

  private observe(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.attemptMs = this.attemptMs === null ? ms : 0.8 * this.attemptMs + 0.2 * ms;
  }
}

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
