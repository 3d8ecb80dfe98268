/**
 * Ordered read-ahead: runs the next few tasks of a sequence while the consumer works on the
 * current result, and hands results back in task order. This is what lets a reader decode data
 * files on the worker pool (both cores) without giving up the order of the plan, and what bounds
 * its memory: at most `window` results exist that the consumer has not taken yet.
 */

/** Default number of decode units (row groups) a read keeps in flight ahead of its consumer. */
export const DEFAULT_READ_AHEAD = 4;

/**
 * Yields the results of `tasks` in order. A task is started when it is pulled from `tasks`; at most
 * `window` started tasks wait to be consumed at any moment, besides the one result the consumer
 * holds. A failed task fails the stream when the consumer reaches it, not before;
 * stopping early leaves running tasks to finish unobserved.
 */
export async function* readAhead<T>(tasks: AsyncIterable<() => Promise<T>>, window: number): AsyncGenerator<T> {
  const size = Math.max(1, Math.floor(window));
  const inflight: Promise<T>[] = [];
  const it = tasks[Symbol.asyncIterator]();
  let exhausted = false;
  const refill = async (): Promise<void> => {
    while (!exhausted && inflight.length < size) {
      const next = await it.next();
      if (next.done) {
        exhausted = true;
        break;
      }
      const started = next.value();
      // Reported in order when consumed; never as an unhandled rejection of a task run ahead.
      started.catch(() => undefined);
      inflight.push(started);
    }
  };
  try {
    await refill();
    for (;;) {
      const head = inflight.shift();
      if (head === undefined) return;
      // Start the next task before waiting for this one, so the workers never idle on the consumer.
      await refill();
      yield await head;
    }
  } finally {
    if (!exhausted) await it.return?.();
  }
}
