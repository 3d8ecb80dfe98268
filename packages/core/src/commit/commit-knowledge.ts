/**
 * What the committers of one table context learn that stays true for every later commit of the
 * process: manifest lists and manifests (immutable files), which manifests and data files passed
 * the base check, the highest sequence numbers per bucket as of a named snapshot, and the newest
 * snapshot id seen. One-shot writes (`table.append`, `delete`, `update`) make a committer per
 * call; sharing this spares each of them re-reading the table's whole metadata and re-checking
 * its data files, so their cost stays flat as the table grows.
 *
 * Nothing here is trusted without a check against storage: the latest snapshot is still probed
 * on every commit (the id is only where the probe starts), cached manifests are looked up by
 * their unique names as a snapshot lists them, and the sequence maxima are reused only for the
 * snapshot id and delta manifest list they were computed at.
 */
import type { FileIO } from '@tidemark/storage';
import type { TableContext } from '../table-context.js';
import type { TablePaths } from '../table-paths.js';
import { BaseCheckMemory } from './base-check.js';
import { MetadataCache } from './metadata-cache.js';
import type { SequenceMaxima } from './sequence-order.js';

export class CommitKnowledge {
  /** Manifest lists and manifests written or read (bounded). */
  readonly cache: MetadataCache;
  /** Manifests, data files and buckets the base check passed. */
  readonly baseCheck = new BaseCheckMemory();
  /** Highest live sequence number per bucket, as of some snapshot (primary-key tables). */
  readonly sequenceMaxima: { maxima: SequenceMaxima | null } = { maxima: null };
  /** Newest snapshot id seen to exist: where the next probe for the latest snapshot starts. */
  knownLatest: number | null = null;
  /** How many ids past `knownLatest` the next probe reads in its first round trip. */
  probeWindow = 1;

  constructor(fileIO: FileIO, paths: TablePaths) {
    this.cache = new MetadataCache(fileIO, paths);
  }
}

const shared = new WeakMap<TableContext, CommitKnowledge>();

/** The knowledge shared by the committers of `context` (made on first use; dropped with the context). */
export function sharedCommitKnowledge(context: TableContext): CommitKnowledge {
  let k = shared.get(context);
  if (k === undefined) {
    k = new CommitKnowledge(context.fileIO, context.paths);
    shared.set(context, k);
  }
  return k;
}
