/**
 * Observers of an ingest pipeline ({@link IngestObserver}): one list of their methods, so that the
 * driver's guard and {@link combineObservers} cannot miss a method added later.
 */
import type { IngestObserver } from './ingest-options.js';

/** Every method of {@link IngestObserver}. */
const OBSERVER_METHODS = ['resumed', 'recordRead', 'checkpointCommitted', 'commitAttempt', 'compacted', 'stopping', 'ended'] as const;

// A method added to IngestObserver and not to the list above fails to compile here.
type Unlisted = Exclude<keyof IngestObserver, (typeof OBSERVER_METHODS)[number]>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;

type Method = (...args: never[]) => void;

/**
 * One observer that tells each of `observers` everything, in order (e.g. the metrics and a log
 * of their own). A method none of them has is absent, so the pipeline skips its work.
 */
export function combineObservers(...observers: ReadonlyArray<IngestObserver | undefined>): IngestObserver {
  const present = observers.filter((o): o is IngestObserver => o !== undefined);
  const out: Record<string, Method> = {};
  for (const key of OBSERVER_METHODS) {
    const methods = present.flatMap((o) => {
      const m = o[key] as Method | undefined;
      return m === undefined ? [] : [m.bind(o) as Method];
    });
    if (methods.length === 1) out[key] = methods[0]!;
    else if (methods.length > 1) out[key] = (...args) => methods.forEach((m) => m(...args));
  }
  return out as IngestObserver;
}

/** `observer` with every method made safe: an observer that throws must not fail the pipeline. */
export function guardedObserver(observer: IngestObserver): IngestObserver {
  const out: Record<string, Method> = {};
  for (const key of OBSERVER_METHODS) {
    const method = observer[key] as Method | undefined;
    if (method === undefined) continue;
    out[key] = (...args) => {
      try {
        method.apply(observer, args);
      } catch {
        // Metrics and health are best effort.
      }
    };
  }
  return out as IngestObserver;
}
