/**
 * Conversion of Arrow timestamp values between time units, shared by the reader (schema evolution
 * of TIMESTAMP precision) and the writer (caller-supplied Arrow data in another unit).
 */
import * as arrow from 'apache-arrow';

const NANOS_PER_UNIT: Record<arrow.TimeUnit, bigint> = {
  [arrow.TimeUnit.SECOND]: 1_000_000_000n,
  [arrow.TimeUnit.MILLISECOND]: 1_000_000n,
  [arrow.TimeUnit.MICROSECOND]: 1_000n,
  [arrow.TimeUnit.NANOSECOND]: 1n,
};

/**
 * Epoch values in unit `from` rescaled to unit `to`: multiplied when `to` is finer, else divided
 * flooring, so that a pre-1970 instant lands in the coarser unit it lies in (truncation would not).
 */
export function rescaleTimestamps(values: BigInt64Array, from: arrow.TimeUnit, to: arrow.TimeUnit): BigInt64Array {
  const f = NANOS_PER_UNIT[from];
  const t = NANOS_PER_UNIT[to];
  const out = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (f >= t) out[i] = v * (f / t);
    else {
      const d = t / f;
      const q = v / d;
      out[i] = v < 0n && q * d !== v ? q - 1n : q;
    }
  }
  return out;
}
