/**
 * Crash injection for testing recovery: `TIDEMARK_CRASH_AT=<point>[:<count>]` kills the process
 * with SIGKILL the `count`-th time (default 1st) it reaches `<point>`. Does nothing unless the
 * variable is set.
 */
import type { FileIO } from '@tidemark/storage';
import { SinkUsageError } from './errors.js';

/** The named moments of the sink protocol where a crash can be injected. */
export const CRASH_POINTS = [
  /** A writer flushed its data files (prepareCommit of the table writer returned). */
  'after-file-flush',
  /** Every writer's committables reached the committer; nothing is durable yet. */
  'after-prepare-commit',
  /** The checkpoint state (and in-flight records) are durable; nothing committed. */
  'after-state-durable',
  /** The commit wrote its manifests and is about to create the snapshot file. */
  'during-commit-before-snapshot',
  /** The snapshot exists; the committer has not yet acknowledged it (in-flight record not cleared). */
  'after-snapshot-before-ack',
  /**
   * A checkpoint carrying a writer's compaction: its APPEND snapshot exists, the COMPACT snapshot
   * is about to be created (primary-key tables whose writers compact only).
   */
  'before-compact-snapshot',
] as const;

/** One of {@link CRASH_POINTS}. */
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Called by the sink at each {@link CrashPoint}. */
export interface CrashHook {
  hit(point: CrashPoint): void;
}

/** A hook that never crashes. */
export const NO_CRASH: CrashHook = { hit: () => undefined };

/**
 * Builds the hook from `TIDEMARK_CRASH_AT` in `env`.
 *
 * @throws SinkUsageError for an unknown point or a bad count.
 */
export function crashHookFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
): CrashHook {
  const spec = env['TIDEMARK_CRASH_AT'];
  if (spec === undefined || spec === '') return NO_CRASH;
  const [point, countText] = spec.split(':');
  if (!(CRASH_POINTS as readonly string[]).includes(point ?? '')) {
    throw new SinkUsageError(`TIDEMARK_CRASH_AT names unknown crash point '${point}'; expected one of ${CRASH_POINTS.join(', ')}`);
  }
  const count = countText === undefined ? 1 : Number(countText);
  if (!Number.isInteger(count) || count < 1)
    throw new SinkUsageError(`TIDEMARK_CRASH_AT count must be a positive integer, got '${countText}'`);
  let seen = 0;
  return {
    hit(p) {
      if (p === point && ++seen === count) kill();
    },
  };
}

/**
 * Wraps `io` so that {@link CrashHook.hit}('during-commit-before-snapshot') runs right before a
 * snapshot file is created: the commit's manifests exist, its snapshot does not; before a COMPACT
 * snapshot, 'before-compact-snapshot' follows.
 */
export function withSnapshotCrashHook(io: FileIO, hook: CrashHook): FileIO {
  if (hook === NO_CRASH) return io;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'createIfAbsent') {
        return async (path: string, data: Uint8Array | string) => {
          if (/\/snapshot\/snapshot-\d+$/.test(path)) {
            hook.hit('during-commit-before-snapshot');
            const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
            if (/"commitKind"\s*:\s*"COMPACT"/.test(text)) hook.hit('before-compact-snapshot');
          }
          return target.createIfAbsent(path, data);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
