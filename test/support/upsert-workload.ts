/** Seeded upsert workloads for the suites that ingest primary-key changes and compare with a model. */
import { seededRandom } from './seeded-random.mjs';

/** One change of key `k`: an insert or update to `v`, or a delete (`v` null). */
export type UpsertOp = { k: number; v: string | null; op: '+I' | '+U' | '-D' };

/** `n` upserts and deletes of `keys` keys drawn from `seed`; every version distinct (`r<i>`). */
export function upsertWorkload(n: number, keys: number, seed: number): UpsertOp[] {
  const rand = seededRandom(seed);
  const live = new Set<number>();
  const out: UpsertOp[] = [];
  for (let i = 0; i < n; i++) {
    const k = Math.floor(rand() * keys);
    if (live.has(k) && rand() < 0.2) {
      out.push({ k, v: null, op: '-D' });
      live.delete(k);
    } else {
      out.push({ k, v: `r${i}`, op: live.has(k) ? '+U' : '+I' });
      live.add(k);
    }
  }
  return out;
}
