/**
 * Backoff between commit attempts: `min(minWait · 2^retry, maxWait)` plus up to 20% jitter, as
 * Java Paimon's `commit.min-retry-wait` / `commit.max-retry-wait`.
 */

/** Milliseconds to wait before retry number `retry` (0-based). */
export function retryWaitMs(retry: number, minWaitMs: number, maxWaitMs: number, random: () => number = Math.random): number {
  const base = Math.min(minWaitMs * 2 ** Math.min(retry, 30), maxWaitMs);
  return base + Math.floor(base * 0.2 * random());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
