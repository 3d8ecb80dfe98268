/** Types of seeded-random.mjs (plain JavaScript so that worker processes and benchmarks can load it). */

/** A seeded pseudo-random generator (mulberry32) in [0, 1): the same seed gives the same workload in every run. */
export declare function seededRandom(seed: number): () => number;
