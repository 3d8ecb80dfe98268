/**
 * What a {@link SinkWriter} hands to the {@link SinkCommitter} at a checkpoint, and its JSON form.
 */
import type { CommitMessage } from '@tidemark/core';
import type { DataFileMeta, IndexFileMeta } from '@tidemark/format';
import { CorruptStateError } from './errors.js';
import { decodeSinkJson, encodeSinkJson } from './sink-json.js';

/** The files one writer prepared for one checkpoint. Serializable with {@link serializeCommittables}. */
export interface SinkCommittable {
  /** Checkpoint id; becomes the commit identifier of the snapshot. */
  readonly checkpointId: bigint;
  /** Index of the writer that produced it (0 … parallelism-1). */
  readonly writerId: number;
  readonly messages: readonly CommitMessage[];
}

/** Every data and changelog file a committable adds or names, in message order. */
export function committableFiles(c: SinkCommittable): Array<{ message: CommitMessage; file: DataFileMeta }> {
  const out: Array<{ message: CommitMessage; file: DataFileMeta }> = [];
  for (const m of c.messages) {
    for (const f of m.newFiles) out.push({ message: m, file: f });
    for (const f of m.compactAfter ?? []) out.push({ message: m, file: f });
    // Changelog files live next to the data files of their bucket.
    for (const f of m.newChangelogFiles ?? []) out.push({ message: m, file: f });
    for (const f of m.compactChangelogFiles ?? []) out.push({ message: m, file: f });
  }
  return out;
}

/** Every index file a committable adds (hash indexes of dynamic buckets), in message order. */
export function committableIndexFiles(c: SinkCommittable): IndexFileMeta[] {
  const out: IndexFileMeta[] = [];
  for (const m of c.messages) out.push(...(m.newIndexFiles ?? []));
  return out;
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
    });
  });
  return value as SinkCommittable[];
}
