/**
 * Counting a FileIO's storage requests for benchmarks that report requests and round trips per
 * step: a round trip starts whenever a request is issued while none is in flight, so requests
 * issued together count once.
 */
import { instrumentFileIO } from '../../test/support/instrumented-file-io.mjs';

/**
 * Wraps `io`; `take()` returns the counts since the last `take()` and starts again. `classify`
 * (optional) names the class of a request's path (e.g. `index`), counted in a field of that name;
 * `classes` lists the names, so that every one is present (0) in each count.
 *
 * @returns {{ io: object, take: () => Record<string, number> }}
 */
export function countRequests(io, { classify, classes = [] } = {}) {
  const fresh = () => Object.fromEntries([['requests', 0], ['roundTrips', 0], ...classes.map((c) => [c, 0])]);
  let stats = fresh();
  const proxy = instrumentFileIO(io, {
    start(request) {
      stats.requests++;
      const cls = classify?.(String(request.path ?? ''));
      if (cls) stats[cls]++;
      if (request.newRoundTrip) stats.roundTrips++;
    },
  });
  return {
    io: proxy,
    take() {
      const s = stats;
      stats = fresh();
      return s;
    },
  };
}
