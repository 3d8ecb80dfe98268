import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  clearConditionalWriteVerdicts,
  ConditionalWriteNotSupportedError,
  ensureConditionalWrites,
  MemoryFileIO,
  type ConditionalWriteTarget,
  type CreateResult,
} from '../src/index.js';

/** A store that either honours or ignores If-None-Match, backed by MemoryFileIO. */
class FakeStore implements ConditionalWriteTarget {
  readonly mem = new MemoryFileIO();
  creates: string[] = [];
  constructor(
    readonly honoursConditional: boolean,
    readonly conditionalWriteCheck: 'probe' | 'skip' = 'probe',
    readonly endpointId = `fake-${randomUUID()}`,
  ) {}
  async createIfAbsent(path: string, data: string | Uint8Array): Promise<CreateResult> {
    this.creates.push(path);
    if (this.honoursConditional) return this.mem.createIfAbsent(path, data);
    await this.mem.write(path, data);
    return 'created';
  }
  delete(path: string): Promise<void> {
    return this.mem.delete(path);
  }
  async keys(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for await (const s of this.mem.list(prefix)) out.push(s.path);
    return out;
  }
}

afterEach(() => {
  clearConditionalWriteVerdicts();
  delete process.env.TIDEMARK_S3_SKIP_CONDITIONAL_CHECK;
});

describe('ensureConditionalWrites', () => {
  it('passes on a store that refuses the second create, cleans up, and caches the verdict', async () => {
    const store = new FakeStore(true);
    const prefix = `memory://probe-${randomUUID()}/wh`;
    await ensureConditionalWrites(store, prefix);
    expect(store.creates).toHaveLength(2);
    expect(store.creates[0]).toBe(store.creates[1]);
    expect(store.creates[0]).toMatch(new RegExp(`^${prefix}/\\.tidemark-probe/[0-9a-f-]{36}$`));
    expect(await store.keys(prefix)).toEqual([]);
    await ensureConditionalWrites(store, `${prefix}/`);
    expect(store.creates).toHaveLength(2); // cached per endpoint + bucket + prefix
    await ensureConditionalWrites(store, `${prefix}/other`);
    expect(store.creates).toHaveLength(4);
  });

  it('throws ConditionalWriteNotSupportedError with the opt-outs on a store that overwrites', async () => {
    const store = new FakeStore(false);
    const prefix = `memory://probe-${randomUUID()}/wh`;
    const err = await ensureConditionalWrites(store, prefix).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConditionalWriteNotSupportedError);
    expect((err as Error).message).toContain("conditionalWriteCheck: 'skip'");
    expect((err as Error).message).toContain('TIDEMARK_S3_SKIP_CONDITIONAL_CHECK=1');
    expect((err as Error).message).toContain(prefix);
    expect(await store.keys(prefix)).toEqual([]);
    // The negative verdict is cached too.
    await expect(ensureConditionalWrites(store, prefix)).rejects.toBeInstanceOf(ConditionalWriteNotSupportedError);
    expect(store.creates).toHaveLength(2);
  });

  it("is skipped when the target's conditionalWriteCheck is 'skip'", async () => {
    const skipping = new FakeStore(false, 'skip');
    await ensureConditionalWrites(skipping, 'memory://x/p');
    expect(skipping.creates).toHaveLength(0);
  });

  it("obeys the target's resolved setting, not the environment (option 'probe' outranks the env opt-out)", async () => {
    process.env.TIDEMARK_S3_SKIP_CONDITIONAL_CHECK = '1';
    const store = new FakeStore(false, 'probe');
    await expect(ensureConditionalWrites(store, 'memory://x/p')).rejects.toBeInstanceOf(ConditionalWriteNotSupportedError);
    expect(store.creates).toHaveLength(2);
  });

  it('does not cache transient failures', async () => {
    const store = new FakeStore(true);
    let fail = true;
    const flaky: ConditionalWriteTarget = {
      endpointId: store.endpointId,
      conditionalWriteCheck: 'probe',
      createIfAbsent: (p, d) => (fail ? Promise.reject(new Error('connection reset')) : store.createIfAbsent(p, d)),
      delete: (p) => store.delete(p),
    };
    await expect(ensureConditionalWrites(flaky, 'memory://flaky/p')).rejects.toThrow('connection reset');
    fail = false;
    await ensureConditionalWrites(flaky, 'memory://flaky/p');
    expect(store.creates).toHaveLength(2);
  });
});
