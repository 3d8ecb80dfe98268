import { randomUUID } from 'node:crypto';
import { ConditionalWriteNotSupportedError, StorageError } from './errors.js';
import type { CreateResult } from './file-io.js';
import { joinPath, parseLocation } from './path.js';

/** What the probe needs from a FileIO; {@link S3FileIO} satisfies it. */
export interface ConditionalWriteTarget {
  readonly endpointId: string;
  readonly conditionalWriteCheck: 'probe' | 'skip';
  createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult>;
  delete(path: string): Promise<void>;
}

/** Verdicts (or probes in flight) per endpoint + bucket + prefix, for the life of the process. */
const verdicts = new Map<string, Promise<void>>();

/** Name of the directory, under the probed prefix, that holds probe objects. */
export const PROBE_DIR = '.tidemark-probe';

/**
 * Checks, once per endpoint/bucket/prefix and process, that the store behind `prefix` refuses a
 * second `If-None-Match: *` PUT of the same key, which tidemark's lock-free commit relies on. It
 * creates `<prefix>/.tidemark-probe/<uuid>` twice with createIfAbsent and deletes it afterwards.
 *
 * Skipped when `io.conditionalWriteCheck` is `'skip'`; for {@link S3FileIO} that comes from the option or,
 * when the option is unset, `TIDEMARK_S3_SKIP_CONDITIONAL_CHECK=1` (see {@link resolveS3Config}).
 * A failed verdict is cached like a good one; transient errors are not cached.
 *
 * @throws ConditionalWriteNotSupportedError when the store accepts the second create.
 */
export async function ensureConditionalWrites(io: ConditionalWriteTarget, prefix: string): Promise<void> {
  if (io.conditionalWriteCheck === 'skip') return;
  const loc = parseLocation(prefix);
  const cacheKey = JSON.stringify([io.endpointId, loc.bucket ?? '', (loc.key ?? loc.path ?? '').replace(/\/+$/, '')]);
  let verdict = verdicts.get(cacheKey);
  if (!verdict) {
    verdict = probe(io, prefix);
    verdicts.set(cacheKey, verdict);
    verdict.catch((err: unknown) => {
      // Only a definite answer is remembered; a network failure may pass next time.
      if (!(err instanceof ConditionalWriteNotSupportedError)) verdicts.delete(cacheKey);
    });
  }
  return verdict;
}

/** Forgets cached probe verdicts (tests). */
export function clearConditionalWriteVerdicts(): void {
  verdicts.clear();
}

async function probe(io: ConditionalWriteTarget, prefix: string): Promise<void> {
  const key = joinPath(prefix, PROBE_DIR, randomUUID());
  let created = false;
  try {
    const first = await io.createIfAbsent(key, 'tidemark conditional-write probe 1');
    if (first !== 'created') {
      throw new StorageError(`Conditional-write probe could not create fresh key ${key} (it already exists)`);
    }
    created = true;
    const second = await io.createIfAbsent(key, 'tidemark conditional-write probe 2');
    if (second !== 'already-exists') {
      throw new ConditionalWriteNotSupportedError(
        prefix,
        `a second PUT with If-None-Match: * to the existing probe key ${key} was accepted instead of refused with 412`,
      );
    }
  } finally {
    if (created) await io.delete(key).catch(() => {});
  }
}
