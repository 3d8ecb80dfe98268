// Plain JavaScript (typed by seeded-random.d.mts) so that package tests, cross-package tests, worker
// processes, the chaos harness and the benchmarks all draw from this one generator.

/** A seeded pseudo-random generator (mulberry32) in [0, 1): the same seed gives the same workload in every run. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
