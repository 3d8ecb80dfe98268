/**
 * What a {@link SinkWriter} hands to the {@link SinkCommitter} at a checkpoint, and its JSON form.
 */
import type { CommitMessage } from '@tidemark/core';
import type { DataFileMeta, IndexFileMeta } from '@tidemark/format';
import { CorruptStateError } from './errors.js';
import { decodeSinkJson, encodeSinkJson } from './sink-json.js';

/**
 * The files one writer prepared for one checkpoint. Serializable with {@link serializeCommittables}.
 * On primary-key tables its messages may carry the writer's compaction as well (compactBefore /
 * compactAfter, compactChangelogFiles, compactNewIndexFiles / compactDeletedIndexFiles).
 */
export interface SinkCommittable {
  /** Checkpoint id; becomes the commit identifier of the snapshot. */
  readonly checkpointId: bigint;
  /** Index of the writer that produced it (0 … parallelism-1). */
  readonly writerId: number;
  readonly messages: readonly CommitMessage[];
}

/**
 * Compaction outputs that are inputs too: a file compaction only moved to another level keeps its
 * name, is live already, and must never be treated as a new file (deleted, or refused as live).
 */
function movedFiles(m: CommitMessage): Set<string> {
  const before = new Set((m.compactBefore ?? []).map((f) => f.fileName));
  return new Set((m.compactAfter ?? []).filter((f) => before.has(f.fileName)).map((f) => f.fileName));
}

/**
 * Every data and changelog file a committable adds, in message order: new files, compaction
 * outputs (not files compaction only moved to another level) and changelog files.
 */
export function committableFiles(c: SinkCommittable): Array<{ message: CommitMessage; file: DataFileMeta }> {
  const out: Array<{ message: CommitMessage; file: DataFileMeta }> = [];
  for (const m of c.messages) {
    for (const f of m.newFiles) out.push({ message: m, file: f });
    const moved = movedFiles(m);
    for (const f of m.compactAfter ?? []) if (!moved.has(f.fileName)) out.push({ message: m, file: f });
    // Changelog files live next to the data files of their bucket.
    for (const f of m.newChangelogFiles ?? []) out.push({ message: m, file: f });
    for (const f of m.compactChangelogFiles ?? []) out.push({ message: m, file: f });
  }
  return out;
}

/**
 * Every index file a committable adds (hash indexes of dynamic buckets, deletion vectors written
 * by compaction), in message order.
 */
export function committableIndexFiles(c: SinkCommittable): IndexFileMeta[] {
  const out: IndexFileMeta[] = [];
  for (const m of c.messages) out.push(...(m.newIndexFiles ?? []), ...(m.compactNewIndexFiles ?? []));
  return out;
}

/**
 * The files only the compaction part of a committable adds (the COMPACT snapshot references them,
 * the APPEND one does not): compaction outputs that are not moved inputs, compaction changelog
 * files and the deletion-vector index files compaction wrote.
 */
export function compactionOutputs(c: SinkCommittable): {
  files: Array<{ message: CommitMessage; file: DataFileMeta }>;
  indexFiles: IndexFileMeta[];
} {
  const files: Array<{ message: CommitMessage; file: DataFileMeta }> = [];
  const indexFiles: IndexFileMeta[] = [];
  for (const m of c.messages) {
    const moved = movedFiles(m);
    for (const f of m.compactAfter ?? []) if (!moved.has(f.fileName)) files.push({ message: m, file: f });
    for (const f of m.compactChangelogFiles ?? []) files.push({ message: m, file: f });
    indexFiles.push(...(m.compactNewIndexFiles ?? []));
  }
  return { files, indexFiles };
}

/** Whether a committable carries a compaction (so its checkpoint commits APPEND, then COMPACT). */
export function hasCompaction(c: SinkCommittable): boolean {
  return c.messages.some(
    (m) =>
      (m.compactBefore?.length ?? 0) > 0 ||
      (m.compactAfter?.length ?? 0) > 0 ||
      (m.compactNewIndexFiles?.length ?? 0) > 0 ||
      (m.compactDeletedIndexFiles?.length ?? 0) > 0,
  );
}

/** Encodes committables as JSON text (bigints and byte arrays kept exact). */
export function serializeCommittables(committables: readonly SinkCommittable[]): string {
  return encodeSinkJson(committables);
}

/**
 * Decodes {@link serializeCommittables} output.
 *
 * @throws CorruptStateError when the text is not a list of committables.
 */
export function deserializeCommittables(text: string, what = 'committables'): SinkCommittable[] {
  return checkCommittables(decodeSinkJson(text, what), what);
}

/** The optional file lists of a commit message, each checked to be a list when present. */
const OPTIONAL_FILE_LISTS = [
  'newChangelogFiles',
  'deletedFiles',
  'compactBefore',
  'compactAfter',
  'compactChangelogFiles',
  'newIndexFiles',
  'deletedIndexFiles',
  'compactNewIndexFiles',
  'compactDeletedIndexFiles',
] as const satisfies ReadonlyArray<keyof CommitMessage>;

/** Validates the shape of decoded committables (the parts the committer relies on). */
export function checkCommittables(value: unknown, what: string): SinkCommittable[] {
  if (!Array.isArray(value)) throw new CorruptStateError(`${what}: expected a list of committables`);
  value.forEach((c: unknown, i) => {
    const o = c as Partial<SinkCommittable> | null;
    if (
      o === null ||
      typeof o !== 'object' ||
      typeof o.checkpointId !== 'bigint' ||
      typeof o.writerId !== 'number' ||
      !Array.isArray(o.messages)
    ) {
      throw new CorruptStateError(`${what}: committable ${i} lacks checkpointId (bigint), writerId or messages`);
    }
    o.messages.forEach((m, j) => {
      if (!(m?.partition instanceof Uint8Array) || typeof m.bucket !== 'number' || !Array.isArray(m.newFiles)) {
        throw new CorruptStateError(`${what}: committable ${i} message ${j} lacks partition bytes, bucket or newFiles`);
      }
      // Optional file lists (absent in states written before writers compacted): a list when present.
      for (const field of OPTIONAL_FILE_LISTS) {
        const v = (m as unknown as Record<string, unknown>)[field];
        if (v !== undefined && !Array.isArray(v)) {
          throw new CorruptStateError(`${what}: committable ${i} message ${j} field '${field}' must be a list of files`);
        }
      }
    });
  });
  return value as SinkCommittable[];
}
