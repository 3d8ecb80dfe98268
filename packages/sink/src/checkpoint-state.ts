/**
 * The durable state of a sink pipeline at one checkpoint.
 */
import { CorruptStateError } from './errors.js';
import { checkCommittables, type SinkCommittable } from './committable.js';
import { decodeSinkJson, encodeSinkJson } from './sink-json.js';

/** A source position: any JSON value the source understands (byte offset, partition → offset map …). */
export type SourceOffset = null | boolean | number | string | readonly SourceOffset[] | { readonly [key: string]: SourceOffset };

/** Format version of {@link CheckpointState}. */
export const CHECKPOINT_STATE_VERSION = 1;

/** Which table a state belongs to. */
export interface TableIdentity {
  /** Table location as given when the state was written (informational). */
  readonly location: string;
  /** SHA-256 (hex, 32 chars) of the table's first schema file: unchanged by moving the table, new for a recreated one. */
  readonly fingerprint: string;
}

/** Everything a pipeline needs to resume after checkpoint `checkpointId`. */
export interface CheckpointState {
  readonly version: number;
  readonly checkpointId: bigint;
  readonly table: TableIdentity;
  /** The pipeline's commit user: generated once, reused after every restart. */
  readonly commitUser: string;
  readonly source: {
    /** Identity of the source (e.g. the JSON-lines file path). */
    readonly id: string;
    /** Where to resume reading; null = from the beginning. */
    readonly offset: SourceOffset;
    /** True when this checkpoint was taken at the end of a bounded source. */
    readonly done: boolean;
  };
  /** Committables of checkpoints ≤ `checkpointId` that were not known to be committed. */
  readonly pending: readonly SinkCommittable[];
  /**
   * Source position of each pending checkpoint, so a commit made during restore carries the same
   * `tidemark.sink.offsets` property as one made before the crash (absent in older states).
   */
  readonly pendingSources?: readonly { readonly checkpointId: bigint; readonly source: CheckpointState['source'] }[];
  /** Wall clock when the state was taken (informational). */
  readonly createdAtMs: number;
}

/** Encodes a state as JSON text. */
export function serializeCheckpointState(state: CheckpointState): string {
  return encodeSinkJson(state, 1);
}

/**
 * Decodes and validates a state.
 *
 * @throws CorruptStateError naming `what` (the file) and the bad field.
 */
export function deserializeCheckpointState(text: string, what: string): CheckpointState {
  const v = decodeSinkJson(text, what) as Partial<CheckpointState> | null;
  if (v === null || typeof v !== 'object') throw new CorruptStateError(`${what}: not a checkpoint state object`);
  if (v.version !== CHECKPOINT_STATE_VERSION)
    throw new CorruptStateError(`${what}: unsupported state version ${String(v.version)} (expected ${CHECKPOINT_STATE_VERSION})`);
  if (typeof v.checkpointId !== 'bigint') throw new CorruptStateError(`${what}: field 'checkpointId' must be a bigint`);
  if (typeof v.commitUser !== 'string' || v.commitUser === '')
    throw new CorruptStateError(`${what}: field 'commitUser' must be a non-empty string`);
  if (typeof v.table?.fingerprint !== 'string' || typeof v.table.location !== 'string')
    throw new CorruptStateError(`${what}: field 'table' needs location and fingerprint`);
  if (typeof v.source?.id !== 'string' || typeof v.source.done !== 'boolean' || !('offset' in v.source))
    throw new CorruptStateError(`${what}: field 'source' needs id, offset and done`);
  checkCommittables(v.pending, `${what}: field 'pending'`);
  return v as CheckpointState;
}
