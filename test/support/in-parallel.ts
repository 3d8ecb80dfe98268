/**
 * Running a test's independent checks side by side: reads of many snapshots on S3 are latency
 * bound, and checking them one after another is most of a concurrency suite's time.
 */

/**
 * Calls `fn` on every item with at most `limit` calls in flight and resolves when all are done;
 * rejects with the first failure (in item order) once every call has settled, so no check is still
 * running when the test moves on.
 */
export async function forEachInParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: Array<{ index: number; error: unknown }> = [];
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        await fn(items[index]!);
      } catch (error) {
        errors.push({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (errors.length > 0) throw errors.sort((a, b) => a.index - b.index)[0]!.error;
}
