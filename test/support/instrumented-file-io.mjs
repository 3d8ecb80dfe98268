/**
 * A FileIO wrapper that observes every storage request, shared by the request-count tests and the
 * benchmarks that count requests (plain JavaScript so that benchmarks can load it; typed by
 * instrumented-file-io.d.mts). One definition of what a request is, what kind an object store
 * would bill it as, and when a sequential round trip starts.
 */

/** Storage request kind of each FileIO method (what an object store would bill it as). */
export const REQUEST_KIND = Object.freeze({
  read: 'get',
  readRange: 'get',
  exists: 'head',
  stat: 'head',
  list: 'list',
  write: 'put',
  createIfAbsent: 'conditional-put',
  delete: 'delete',
  deleteMany: 'delete',
});

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wraps `inner` so that each request method (those of {@link REQUEST_KIND}) reports to `hooks`:
 * `start(request)` when it is issued, with `request.newRoundTrip` true when no other request was in
 * flight (requests issued together count as one round trip), and `end(request, outcome)` when it
 * settles. A listing is in flight from its first page request until it is consumed or abandoned.
 * `before(request)`, if it returns a promise, is awaited before the request is issued, and
 * `after(request, outcome)` after a request that succeeded, before its caller sees the result (a
 * test's hooks to interleave another writer). `latencyMs` delays every request, so that requests issued
 * together overlap as they would on an object store. Other members pass through unchanged.
 */
export function instrumentFileIO(inner, hooks = {}) {
  let inFlight = 0;
  const latencyMs = () => (typeof hooks.latencyMs === 'function' ? hooks.latencyMs() : (hooks.latencyMs ?? 0));
  return new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function' || prop === 'constructor') return value;
      // Bound, so that methods reaching private state of the store (close, say) still work.
      if (typeof prop !== 'string' || REQUEST_KIND[prop] === undefined) return value.bind(target);
      return (...args) => {
        const request = { method: prop, kind: REQUEST_KIND[prop], path: typeof args[0] === 'string' ? args[0] : undefined, args };
        const begin = () => {
          request.newRoundTrip = inFlight === 0;
          inFlight++;
          hooks.start?.(request);
        };
        const finish = (outcome) => {
          inFlight--;
          hooks.end?.(request, outcome);
        };
        if (prop === 'list') {
          return (async function* () {
            await hooks.before?.(request);
            begin();
            let failed = false;
            try {
              const ms = latencyMs();
              if (ms > 0) await delay(ms);
              yield* value.apply(target, args);
            } catch (error) {
              failed = true;
              finish({ error });
              throw error;
            } finally {
              if (!failed) finish({ value: undefined });
            }
          })();
        }
        const run = async () => {
          const ms = latencyMs();
          if (ms > 0) await delay(ms);
          return value.apply(target, args);
        };
        const issue = () => {
          begin();
          return run().then(
            (result) => {
              finish({ value: result });
              const after = hooks.after?.(request, { value: result });
              return after && typeof after.then === 'function' ? after.then(() => result) : result;
            },
            (error) => {
              finish({ error });
              throw error;
            },
          );
        };
        const waiting = hooks.before?.(request);
        return waiting && typeof waiting.then === 'function' ? waiting.then(issue) : issue();
      };
    },
  });
}
