import { describe, expect, it } from 'vitest';
import { idRange, mapOrdered } from '../src/expire/bounded-map.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapOrdered', () => {
  it('yields results in input order while keeping at most `concurrency` calls in flight', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const out: number[] = [];
    for await (const v of mapOrdered(idRange(0, 40), 5, async (i) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep((i * 7) % 5); // later items often finish first
      inFlight--;
      return i * 2;
    })) {
      out.push(v);
    }
    expect(out).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
    expect(maxInFlight).toBe(5);
  });

  it('stops starting calls after an early break and waits for the ones in flight', async () => {
    const started: number[] = [];
    let finished = 0;
    for await (const v of mapOrdered(idRange(0, 100), 4, async (i) => {
      started.push(i);
      await sleep(2);
      finished++;
      return i;
    })) {
      if (v === 2) break;
    }
    expect(finished).toBe(started.length);
    expect(started.length).toBeLessThanOrEqual(3 + 4);
  });

  it('rethrows the first failing call in order', async () => {
    const run = async () => {
      for await (const _ of mapOrdered(idRange(0, 10), 3, async (i) => {
        await sleep(1);
        if (i === 4) throw new Error('boom 4');
        return i;
      })) {
        // consume
      }
    };
    await expect(run()).rejects.toThrow('boom 4');
  });
});
