/**
 * Row kinds of primary-key records (Paimon's `RowKind`, stored as `_VALUE_KIND`): `+I` insert,
 * `-U` update-before, `+U` update-after, `-D` delete. Upserts are `+I`/`+U`; `-U`/`-D` retract.
 */
import { ROW_KIND_DELETE, ROW_KIND_INSERT, ROW_KIND_UPDATE_AFTER, ROW_KIND_UPDATE_BEFORE } from '../../read/merge-engine.js';
import { WriteValidationError } from '../write-errors.js';

/** The `_VALUE_KIND` byte of each row kind. */
export const RowKind = {
  INSERT: ROW_KIND_INSERT,
  UPDATE_BEFORE: ROW_KIND_UPDATE_BEFORE,
  UPDATE_AFTER: ROW_KIND_UPDATE_AFTER,
  DELETE: ROW_KIND_DELETE,
} as const;

/** A `_VALUE_KIND` value: 0 `+I`, 1 `-U`, 2 `+U`, 3 `-D`. */
export type RowKindValue = (typeof RowKind)[keyof typeof RowKind];

const SHORT_STRINGS = ['+I', '-U', '+U', '-D'] as const;

/** The short string of a row kind (`+I`, `-U`, `+U`, `-D`). */
export function rowKindToString(kind: number): string {
  const s = SHORT_STRINGS[kind];
  if (s === undefined) throw new RangeError(`invalid row kind byte ${kind} (expected 0..3)`);
  return s;
}

/**
 * Parses `+I`, `-U`, `+U` or `-D` (Paimon's short strings; surrounding blanks ignored).
 *
 * @param row 0-based index of the input row, named in the error
 * @param field the input field the value came from, named in the error
 * @throws WriteValidationError for anything else.
 */
export function parseRowKind(s: string, row?: number, field?: string): RowKindValue {
  const kind = typeof s === 'string' ? SHORT_STRINGS.indexOf(s.trim() as (typeof SHORT_STRINGS)[number]) : -1;
  if (kind < 0) {
    const shown = typeof s === 'string' ? JSON.stringify(s) : s === null ? 'null' : typeof s;
    throw new WriteValidationError(field, row, `invalid row kind ${shown}: expected '+I', '-U', '+U' or '-D'`);
  }
  return kind as RowKindValue;
}
