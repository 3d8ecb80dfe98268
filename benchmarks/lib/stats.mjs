/**
 * Figures computed from measurements: percentiles and means of samples, sums of Arrow columns
 * (checksums that prove two readers returned the same values).
 */

/** The nearest-rank `p`-th percentile of `values` (any order; not changed). */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Arithmetic mean; 0 for no values. */
export function mean(values) {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** Sum of an Int64 Arrow column (all chunks), as a bigint; 0n for a missing column. */
export function sumInt64(vector) {
  let sum = 0n;
  if (!vector) return sum;
  for (const data of vector.data) {
    const values = data.values;
    for (let i = 0; i < data.length; i++) sum += values[i];
  }
  return sum;
}
