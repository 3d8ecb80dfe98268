/** Validity of Arrow rows, shared by the writer's column code (`arrow-columns.ts`, `arrow-decode.ts`). */
import * as arrow from 'apache-arrow';

/** True when row `i` (relative to the data's offset) is not null. */
export function isValidAt(data: arrow.Data, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0) return data.typeId !== arrow.Type.Null;
  const j = data.offset + i;
  return ((bitmap[j >> 3]! >> (j & 7)) & 1) === 1;
}
