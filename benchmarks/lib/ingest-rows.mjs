/** The result rows of the ingestion benchmarks (ingest, sink-pk). */
import { percentile } from './stats.mjs';

/**
 * The columns an ingestion row starts with: the case, records, seconds, records/s and the
 * checkpoint count and latencies of a run `r` (`{ seconds, checkpointMs? }`).
 */
export function ingestRow(label, records, r) {
  const ck = [...(r.checkpointMs ?? [])].sort((a, b) => a - b);
  return {
    case: label,
    records,
    seconds: r.seconds,
    'records/s': records / r.seconds,
    checkpoints: ck.length,
    'checkpoint p50 ms': ck.length ? percentile(ck, 50) : null,
    'checkpoint max ms': ck.length ? ck[ck.length - 1] : null,
  };
}
