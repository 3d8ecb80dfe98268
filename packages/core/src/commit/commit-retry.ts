/**
 * Backoff between commit attempts. {@link retryWaitMs} is Java Paimon's rule
 * (`min(minWait · 2^retry, maxWait)` plus up to 20% jitter, from `commit.min-retry-wait` /
 * `commit.max-retry-wait`); {@link RetryBackoff} is what the committer uses: the same bounds,
 * but full jitter scaled by how long an attempt takes on this store and by how many writers contend.
 */

/** Milliseconds to wait before retry number `retry` (0-based). */
export function retryWaitMs(retry: number, minWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const base = Math.min(minWaitMs * 2 ** Math.min(retry, 30), maxWaitMs);
  return base + Math.floor(base * 0.2 * random());
}

/**
 * Most attempts the losers of one race spread over. More would order them better, but the table
 * stays idle while they sleep: with 8 writers and attempts slowed to a second by a busy machine,
 * spreading over 7 attempts made the first retry wait up to 7 s.
 */
const MAX_SPREAD = 2;

/**
 * Adaptive backoff of one committer. Two writers that lost to the same winner re-read the table at
 * about the same moment and would collide again; how far apart they must start depends on how long
 * an attempt takes (probe, writes, create), which ranges from about a millisecond on local disk to
 * tens of milliseconds on an object store, and on how many writers contend. So the wait is drawn
 * uniformly from `[0, min(maxWait, unit · max(1/2, min(2, contenders) / (1 + retry)))]` ("full
 * jitter"), where `unit` is a moving average of this committer's attempt durations (at least
 * `minWait`) and `contenders` the other writers seen in the recent snapshots
 * ({@link WriterActivity}): the losers of one race spread over one attempt's time, or two when
 * several writers contend.
 *
 * The range shrinks as a commit keeps losing instead of growing: a writer that just won has
 * nothing to read before its next commit while the losers must read its snapshot first, so under
 * contention the winner tends to win again, and an exponential backoff would send the losers to
 * sleep for longer each time while it does (one writer committing 20 snapshots in a row while the
 * others waited seconds). Shrinking the wait of the writers that lost most puts them first in line.
 * It stays at least half an attempt so that two writers that both lost often do not retry in step.
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

  /**
   * Records a lost attempt (retry number `retry`, 0-based) and returns how long to wait before the
   * next; `contenders` is how many other writers committed recently (at least the one that won).
   */
  lost(retry: number, attemptMs: number, contenders = 1): number {
    this.observe(attemptMs);
    const unit = Math.max(this.minWaitMs, this.attemptMs ?? this.minWaitMs);
    const slots = Math.max(0.5, Math.min(MAX_SPREAD, Math.max(1, contenders)) / (1 + Math.max(0, retry)));
    const cap = Math.min(this.maxWaitMs, unit * slots);
    return Math.floor(cap * this.random());
  }

  private observe(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.attemptMs = this.attemptMs === null ? ms : 0.8 * this.attemptMs + 0.2 * ms;
  }
}

/**
 * Which writers committed the most recent snapshots a committer has seen (its probes, the
 * snapshots it lost to, its own): the only sign of other writers a lock-free committer has. It
 * sizes the backoff, and tells whether checking for a new snapshot right before the create is
 * worth its request.
 */
export class WriterActivity {
  /** Commit user of each snapshot id among the newest `window` ids seen. */
  private readonly owners = new Map<number, string>();
  private newest = 0;

  constructor(private readonly window = 16) {}

  /** Records that snapshot `id` was committed by `commitUser`. */
  saw(id: number, commitUser: string): void {
    if (id <= this.newest - this.window) return;
    this.owners.set(id, commitUser);
    if (id > this.newest) {
      this.newest = id;
      for (const k of this.owners.keys()) if (k <= id - this.window) this.owners.delete(k);
    }
  }

  /** How many commit users other than `self` created one of the newest `window` snapshots. */
  others(self: string): number {
    const users = new Set<string>();
    for (const u of this.owners.values()) if (u !== self) users.add(u);
    return users.size;
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
