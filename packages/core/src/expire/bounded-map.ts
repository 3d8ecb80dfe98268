/**
 * Bounded-concurrency mapping for the maintenance jobs: object-store reads are latency bound, so
 * a handful in flight multiplies throughput, while a fixed window keeps memory bounded.
 */

/** How many metadata reads the maintenance jobs keep in flight. */
export const METADATA_READ_CONCURRENCY = 16;

/**
 * Maps `items` through `fn` with at most `concurrency` calls in flight and yields the results in
 * input order (so callers can fold them as if read one by one). At most `concurrency` results are
 * held at a time. Stopping early (break/throw) waits for the calls still in flight, so nothing
 * keeps running after the generator is done.
 */
export async function* mapOrdered<T, R>(items: Iterable<T>, concurrency: number, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const it = items[Symbol.iterator]();
  const window: Promise<R>[] = [];
  let exhausted = false;
  const fill = (): void => {
    while (!exhausted && window.length < concurrency) {
      const next = it.next();
      if (next.done === true) {
        exhausted = true;
        return;
      }
      const p = fn(next.value);
      p.catch(() => undefined); // awaited below; avoids an unhandled rejection while queued
      window.push(p);
    }
  };
  try {
    fill();
    while (window.length > 0) {
      const result = await window.shift()!;
      fill();
      yield result;
    }
  } finally {
    await Promise.allSettled(window);
  }
}

/** Ascending integers in `[from, to)`. */
export function* idRange(from: number, to: number): Generator<number> {
  for (let id = from; id < to; id++) yield id;
}
