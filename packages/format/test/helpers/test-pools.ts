/**
 * Worker pools a test file creates, closed after its tests so that no worker keeps vitest's fork alive.
 */
import { afterAll } from 'vitest';
import { ParquetWorkerPool } from '../../src/index.js';

/** Returns a pool factory for one test file; call at module level (it registers an `afterAll`). */
export function trackedPools(): (size: number, workerUrl?: URL) => ParquetWorkerPool {
  const pools: ParquetWorkerPool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });
  return (size, workerUrl) => {
    const p = new ParquetWorkerPool(workerUrl ? { size, workerUrl } : { size });
    pools.push(p);
    return p;
  };
}
