/**
 * What the committers of one table context learn that stays true for every later commit of the
 * process: manifest lists and manifests (immutable files), which manifests and data files passed
 * the base check, the newest snapshot id seen, and the writers' plan of live files per bucket. One-shot writes (`table.append`, `delete`, `update`) make a committer per
 * call; sharing this spares each of them re-reading the table's whole metadata and re-checking
 * its data files, so their cost stays flat as the table grows.
 *
 * Nothing here is trusted without a check against storage: the latest snapshot is still probed
 * on every commit (the id is only where the probe starts), cached manifests are looked up by
 * their unique names as a snapshot lists them, and the plan of live files is reused only for the
 * snapshot id and delta manifest list it describes.
 */
import type { FileIO } from '@tidemark/storage';
import type { DataFileMeta, ManifestEntry, Snapshot } from '@tidemark/format';
import type { TableContext } from '../table-context.js';
import type { TablePaths } from '../table-paths.js';
import { BaseCheckMemory } from './base-check.js';
import { MetadataCache } from './metadata-cache.js';
import { bucketKey } from './sequence-order.js';

/** Live files per (partition, bucket) of one snapshot, as writers plan sequence numbers and compactions against them. */
export interface LivePlan {
  /** By `bucketKey(partition, bucket)`. */
  readonly files: ReadonlyMap<string, readonly DataFileMeta[]>;
  readonly snapshotId: number | null;
  /** Of snapshot `snapshotId`: names it uniquely (an id is reused after a rollback). */
  readonly deltaManifestList: string | null;
}

export class CommitKnowledge {
  /** Manifest lists and manifests written or read (bounded). */
  readonly cache: MetadataCache;
  /** Manifests, data files and buckets the base check passed. */
  readonly baseCheck = new BaseCheckMemory();
  /** Newest snapshot id seen to exist: where the next probe for the latest snapshot starts. */
  knownLatest: number | null = null;
  /** How many ids past `knownLatest` the next probe reads in its first round trip. */
  probeWindow = 1;
  /**
   * The writers' last plan of live files (`Table.newBatchWrite`), advanced past every snapshot a
   * committer of the table creates directly on top of it; reused while it is the latest's.
   */
  livePlan: LivePlan | null = null;

  /**
   * After a committer created `created` on top of `base` with the data-file delta `entries`: a
   * plan of `base` plus the delta is exactly the live set of `created` (the same fold a scan
   * does). Any other plan cannot be advanced and is forgotten.
   */
  advanceLivePlan(base: Snapshot | null, created: Snapshot, entries: readonly ManifestEntry[]): void {
    const plan = this.livePlan;
    if (plan === null) return;
    this.livePlan = null;
    if (base === null || plan.snapshotId !== base.id || plan.deltaManifestList !== base.deltaManifestList) return;
    if (created.id !== base.id + 1) return;
    const files = new Map(plan.files);
    const touched = new Set<string>();
    for (const e of entries) {
      const key = bucketKey(e.partition, e.bucket);
      if (!touched.has(key)) {
        files.set(key, [...(files.get(key) ?? [])]);
        touched.add(key);
      }
      const list = files.get(key) as DataFileMeta[];
      if (e.kind === 'ADD') {
        list.push(e.file);
        continue;
      }
      // A compaction may keep a file's name at a new level: the identity is name and level.
      const at = list.findIndex((f) => f.fileName === e.file.fileName && f.level === e.file.level);
      if (at < 0) return; // not in the plan: it was not the base's after all
      list.splice(at, 1);
    }
    for (const key of touched) if (files.get(key)!.length === 0) files.delete(key);
    this.livePlan = { files, snapshotId: created.id, deltaManifestList: created.deltaManifestList };
  }

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
