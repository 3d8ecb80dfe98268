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

/**
 * Fairness between writers that commit as fast as they can to one table. Every writer must read a
 * new snapshot (manifest list, then manifests, then the data files its commit checks) before it
 * can build on it, while the writer that created it has nothing to read: without a pause, that
 * writer starts its next commit before the others caught up, wins again, and they lose race after
 * race until they give up (the tail of the commit latency). So a committer that created snapshots
 * in a row, with no other writer's snapshot in between, while it has seen other writers lately
 * (a lost race, or their snapshots, within its last {@link CONTENTION_MEMORY} commits) waits
 * before its next probe until `catch-up time × streak` (at most 4) has passed since its last
 * snapshot. The catch-up time is measured: how long this committer took to read another writer's
 * snapshot and write a base list on it. A lone writer, writers taking turns, and writers whose
 * commits are further apart than that never wait.
 */
export class WinStreakYield {
  /** Commits left during which contention is remembered. */
  private contended = 0;
  /** Snapshots created in a row with no other writer's snapshot in between. */
  private streak = 0;
  private lastCreatedAt: number | null = null;
  /** Moving average of catch-up times in ms (null until one is measured). */
  private catchUpMs: number | null = null;

  /** Records how long reading another writer's snapshot (and writing a base list on it) took. */
  caughtUp(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.catchUpMs = this.catchUpMs === null ? ms : 0.8 * this.catchUpMs + 0.2 * ms;
  }

  /** Records a sign of other writers: a lost race, or snapshots of theirs found by a probe. */
  sawOthers(): void {
    this.contended = CONTENTION_MEMORY;
  }

  /**
   * Records a snapshot this committer created at time `at`; `othersSeen`: whether the commit met
   * another writer (lost a race or found a snapshot of theirs) on the way.
   */
  created(at: number, othersSeen: boolean): void {
    this.lastCreatedAt = at;
    if (othersSeen) {
      this.streak = 0;
      this.contended = CONTENTION_MEMORY;
    } else {
      this.streak++;
      if (this.contended > 0) this.contended--;
    }
  }

  /** How long to wait at time `now` before the next commit's probe (0: go ahead). */
  waitMs(now: number, maxWaitMs: number): number {
    if (this.contended === 0 || this.streak === 0 || this.catchUpMs === null || this.lastCreatedAt === null) return 0;
    const due = this.catchUpMs * Math.min(this.streak, MAX_YIELD_UNITS);
    return Math.max(0, Math.min(maxWaitMs, Math.floor(due - (now - this.lastCreatedAt))));
  }
}

/** How many commits without a sign of other writers a committer keeps yielding after its wins. */
const CONTENTION_MEMORY = 8;

/** At most this many catch-up times of yielding after a streak of wins. */
const MAX_YIELD_UNITS = 4;

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
