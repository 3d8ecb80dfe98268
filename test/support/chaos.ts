/**
 * What the chaos suites (sink-chaos, kafka-chaos) share: loading a harness of test/chaos/ and the
 * exactly-once checks of the tally every harness reports.
 */
import { expect } from 'vitest';

/** The tally fields every chaos harness reports (see test/chaos/ingest-process.mjs runTrials). */
export interface ChaosTally {
  trials: number;
  passed: number;
  failed: Array<{ trial: number; seed: number; problems: string[] }>;
  runs: number;
  kills: Record<string, number>;
  lost: number;
  duplicated: number;
}

/** Imports a harness of test/chaos/ (`harness.mjs`, `kafka-harness.mjs`). */
export async function chaosHarness<T>(file: string): Promise<T> {
  return (await import(new URL(`../chaos/${file}`, import.meta.url).href)) as T;
}

/** Every trial passed, nothing lost, nothing duplicated (the failed trials are printed first). */
export function expectExactlyOnce(tally: ChaosTally, trials: number): void {
  if (tally.failed.length > 0) console.error(JSON.stringify(tally.failed, null, 2));
  expect(tally.failed).toEqual([]);
  expect(tally.passed).toBe(trials);
  expect(tally.lost).toBe(0);
  expect(tally.duplicated).toBe(0);
}
