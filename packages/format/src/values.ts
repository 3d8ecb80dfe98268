/**
 * The in-memory representation of Paimon values used throughout tidemark (BinaryRow codec,
 * partition paths, stats, readers and writers):
 *
 * | Paimon type | JS value |
 * |---|---|
 * | BOOLEAN | `boolean` |
 * | TINYINT, SMALLINT, INT, FLOAT, DOUBLE | `number` |
 * | BIGINT | `bigint` |
 * | DECIMAL(p, s) | {@link Decimal} `{ unscaled: bigint, scale: number }` (value = unscaled × 10^-scale) |
 * | CHAR, VARCHAR, STRING | `string` |
 * | BINARY, VARBINARY, BYTES | `Uint8Array` |
 * | DATE | `number` — days since 1970-01-01 |
 * | TIME(p) | `number` — milliseconds of the day |
 * | TIMESTAMP(p), TIMESTAMP_LTZ(p) | {@link Timestamp} `{ millis, nanoOfMillis }` |
 * | any type, SQL NULL | `null` |
 *
 * Timestamps without time zone are wall-clock values stored as if they were UTC.
 */

/** A DECIMAL value: `unscaled × 10^-scale`. The scale should equal the column type's scale. */
export interface Decimal {
  readonly unscaled: bigint;
  readonly scale: number;
}

/**
 * A TIMESTAMP / TIMESTAMP_LTZ value: epoch milliseconds (may be negative) plus the nanoseconds
 * within that millisecond (0..999999), mirroring Paimon's `Timestamp`.
 */
export interface Timestamp {
  readonly millis: number;
  readonly nanoOfMillis: number;
}

/** Any single value of the representation above. */
export type Value = boolean | number | bigint | string | Uint8Array | Decimal | Timestamp | null;

/** Plain decimal text of a Decimal, like Java's `BigDecimal.toPlainString()` (e.g. `-0.05`, `120`). */
export function decimalToPlainString(d: Decimal): string {
  const neg = d.unscaled < 0n;
  const digits = (neg ? -d.unscaled : d.unscaled).toString();
  let out: string;
  if (d.scale <= 0) {
    out = d.unscaled === 0n ? '0' : digits + '0'.repeat(-d.scale);
  } else if (digits.length > d.scale) {
    out = `${digits.slice(0, digits.length - d.scale)}.${digits.slice(digits.length - d.scale)}`;
  } else {
    out = `0.${digits.padStart(d.scale, '0')}`;
  }
  return neg ? '-' + out : out;
}

/** True if `v` is a {@link Decimal}. */
export function isDecimal(v: unknown): v is Decimal {
  return typeof v === 'object' && v !== null && typeof (v as Decimal).unscaled === 'bigint';
}

/** True if `v` is a {@link Timestamp}. */
export function isTimestamp(v: unknown): v is Timestamp {
  return (
    typeof v === 'object' && v !== null && typeof (v as Timestamp).millis === 'number' && typeof (v as Timestamp).nanoOfMillis === 'number'
  );
}
