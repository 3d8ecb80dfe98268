/**
 * Merging a snapshot's manifests before they become the next base manifest list, with Paimon's
 * legacy ManifestFileMerger rules (docs/format.md, "Manifest merging"): a full compaction when the manifests
 * that must change reach `manifest.full-compaction-threshold-size`, else a minor compaction of
 * groups reaching `manifest.target-file-size` and of a trailing group of at least
 * `manifest.merge-min-count` manifests.
 */
import type { FileIO } from '@tidemark/storage';
import {
  deserializeBinaryRow,
  fileEntryIdentity,
  type DataType,
  type ManifestEntry,
  type ManifestFileMeta,
  type Value,
} from '@tidemark/format';
import { compareValues } from '../predicate.js';
import type { TablePaths } from '../table-paths.js';
import { EntryFolder, manifestEntries, partitionKey } from './manifest-fold.js';
import type { ManifestWriter } from './manifest-writer.js';
import { storageManifestSource, type ManifestSource } from './metadata-cache.js';

export interface ManifestMergeOptions {
  readonly targetFileSize: number;
  readonly mergeMinCount: number;
  readonly fullCompactionThresholdSize: number;
}

/**
 * Returns the merged manifest metas for `input` (in order). New manifests are written through
 * `writer` (which records them for clean-up); input manifests are never deleted here, since older
 * snapshots still use them. Manifests are read through `source` (a committer's cache) when given.
 * Only manifests that change are read: a commit that merges nothing reads no manifest.
 */
export async function mergeManifests(
  fileIO: FileIO,
  paths: TablePaths,
  input: readonly ManifestFileMeta[],
  writer: ManifestWriter,
  partitionTypes: readonly DataType[],
  options: ManifestMergeOptions,
  source: ManifestSource = storageManifestSource(fileIO, paths),
): Promise<ManifestFileMeta[]> {
  const full = await tryFullCompaction(fileIO, paths, input, writer, partitionTypes, options, source);
  return full ?? tryMinorCompaction(fileIO, paths, input, writer, options, source);
}

async function tryMinorCompaction(
  fileIO: FileIO,
  paths: TablePaths,
  input: readonly ManifestFileMeta[],
  writer: ManifestWriter,
  options: ManifestMergeOptions,
  source: ManifestSource,
): Promise<ManifestFileMeta[]> {
  const result: ManifestFileMeta[] = [];
  let candidates: ManifestFileMeta[] = [];
  let total = 0;
  for (const m of input) {
    total += m.fileSize;
    candidates.push(m);
    if (total >= options.targetFileSize) {
      result.push(...(await mergeCandidates(fileIO, paths, candidates, writer, source)));
      candidates = [];
      total = 0;
    }
  }
  if (candidates.length >= options.mergeMinCount) result.push(...(await mergeCandidates(fileIO, paths, candidates, writer, source)));
  else result.push(...candidates);
  return result;
}

/** Folds a group (bounded by the target size) and writes the surviving ADD and DELETE entries. */
async function mergeCandidates(
  fileIO: FileIO,
  paths: TablePaths,
  candidates: readonly ManifestFileMeta[],
  writer: ManifestWriter,
  source: ManifestSource,
): Promise<ManifestFileMeta[]> {
  if (candidates.length <= 1) return [...candidates];
  const folder = await new EntryFolder().addAll(manifestEntries(fileIO, paths, candidates, source));
  return writer.writeEntries(folder.entries.values());
}

/**
 * How many leading manifests a full compaction keeps as they are: the large ones (at least
 * `targetFileSize`) without DELETE entries. Every manifest after them must be rewritten.
 */
export function fullCompactionBaseLength(manifests: readonly ManifestFileMeta[], targetFileSize: number): number {
  let i = 0;
  while (i < manifests.length && manifests[i]!.numDeletedFiles === 0 && manifests[i]!.fileSize >= targetFileSize) i++;
  return i;
}

async function tryFullCompaction(
  fileIO: FileIO,
  paths: TablePaths,
  input: readonly ManifestFileMeta[],
  writer: ManifestWriter,
  partitionTypes: readonly DataType[],
  options: ManifestMergeOptions,
  source: ManifestSource,
): Promise<ManifestFileMeta[] | null> {
  const baseLength = fullCompactionBaseLength(input, options.targetFileSize);
  const base = input.slice(0, baseLength);
  const delta = input.slice(baseLength);
  const deltaSize = delta.reduce((s, m) => s + m.fileSize, 0);
  if (deltaSize < options.fullCompactionThresholdSize) return null;

  // Identities deleted anywhere in the delta, and their partitions (for pruning base manifests).
  const deleted = new Set<string>();
  const deletedPartitions = new Map<string, Uint8Array>();
  for (const m of delta) {
    if (m.numDeletedFiles === 0) continue;
    for await (const e of source.entries(m.fileName)) {
      if (e.kind !== 'DELETE') continue;
      deleted.add(fileEntryIdentity(e));
      deletedPartitions.set(partitionKey(e.partition), e.partition);
    }
  }

  const result: ManifestFileMeta[] = [];
  const toBeMerged: ManifestFileMeta[] = [];
  const deletedRows =
    partitionTypes.length > 0 ? [...deletedPartitions.values()].map((p) => deserializeBinaryRow(p, partitionTypes)) : null;
  for (const m of base) {
    if (deleted.size === 0 || (deletedRows !== null && !rangeMayContainAny(m, partitionTypes, deletedRows))) result.push(m);
    else toBeMerged.push(m);
  }

  // Base manifests touched by a delete are rewritten without the deleted files (one manifest at a time).
  for (const m of toBeMerged) {
    const kept: ManifestEntry[] = [];
    let changed = false;
    for await (const e of source.entries(m.fileName)) {
      if (e.kind === 'DELETE') continue;
      if (deleted.has(fileEntryIdentity(e))) changed = true;
      else kept.push(e);
    }
    if (changed) result.push(...(await writer.writeEntries(kept)));
    else result.push(m);
  }

  // The delta is streamed into new manifests holding only surviving ADDs.
  async function* survivingAdds(): AsyncGenerator<ManifestEntry> {
    for await (const e of manifestEntries(fileIO, paths, delta, source)) {
      if (e.kind === 'ADD' && !deleted.has(fileEntryIdentity(e))) yield e;
    }
  }
  result.push(...(await writer.writeEntries(survivingAdds())));
  return result;
}

/** False only when no partition in `rows` can lie within the manifest's partition stats range. */
function rangeMayContainAny(meta: ManifestFileMeta, types: readonly DataType[], rows: readonly Value[][]): boolean {
  let mins: Value[];
  let maxs: Value[];
  try {
    mins = deserializeBinaryRow(meta.partitionStats.minValues, types);
    maxs = deserializeBinaryRow(meta.partitionStats.maxValues, types);
  } catch {
    return true;
  }
  const nullCounts = meta.partitionStats.nullCounts;
  return rows.some((row) =>
    row.every((v, i) => {
      const min = mins[i] ?? null;
      const max = maxs[i] ?? null;
      if (v === null) return nullCounts === null || (nullCounts[i] ?? 1) !== 0;
      if (min === null || max === null) return true;
      return compareValues(v, min) >= 0 && compareValues(v, max) <= 0;
    }),
  );
}
