/**
 * The record of a primary-key row as merging sees it, in a module of its own: the merge engine and
 * the aggregate functions it builds both take it.
 */
import type { Value } from '@tidemark/format';

/** One row of a primary-key data file (or of a write buffer), by reference. */
export interface KeyValueRecord {
  /** Trimmed primary key values (values.ts representation). */
  readonly key: readonly Value[];
  readonly sequence: bigint;
  /** Values of the `sequence.field` columns, when the table has any (ordered before `sequence`). */
  readonly userSequence?: readonly Value[];
  /** `_VALUE_KIND`. */
  readonly kind: number;
  /** Chunk (file batch) and row the record's values live in. */
  readonly chunk: number;
  readonly row: number;
}
