/**
 * `KafkaSource` at the end of a pipeline: once closed, a lag scrape or a group commit opens no new
 * connection (one nobody would close keeps a process alive); `open` reconnects. Once the stop
 * signal aborted, the last group commit gets the signal (the client then does not retry).
 */
import { describe, expect, it } from 'vitest';
import { KafkaSource, SourceError, type FetchRequest, type FetchResult, type KafkaClient } from '../src/index.js';

/** One topic `t` of two partitions holding `n` messages each; counts clients made and closed. */
class Clients {
  made = 0;
  closed = 0;
  commits: Array<{ offsets: readonly FetchRequest[]; signal: AbortSignal | undefined }> = [];
  constructor(private readonly n: number) {}

  readonly factory = (): KafkaClient => {
    this.made++;
    const n = this.n;
    return {
      partitions: async () => new Map([['t', [0, 1]]]),
      watermarks: async (_t, partitions) => partitions.map((partition) => ({ partition, low: 0, high: n })),
      offsetsForTimestamp: async () => new Map(),
      groupOffsets: async () => new Map(),
      commitGroupOffsets: async (_g, offsets, options) => {
        this.commits.push({ offsets, signal: options?.signal });
      },
      fetch: async (requests: readonly FetchRequest[]): Promise<FetchResult[]> =>
        requests.map((r) => ({
          topic: r.topic,
          partition: r.partition,
          kind: 'messages',
          messages: r.offset < n ? [{ offset: r.offset, key: null, value: Buffer.from(`{"id":${r.offset}}`), timestamp: 0 }] : [],
          nextOffset: Math.min(n, r.offset + 1),
          highWatermark: n,
        })),
      close: async () => {
        this.closed++;
      },
    };
  };
}

describe('KafkaSource close and stop', () => {
  it('after close, backlog and committed fail without connecting again; open reconnects', async () => {
    const clients = new Clients(3);
    const source = new KafkaSource({ connection: { brokers: ['b:1'] }, topics: ['t'], untilEnd: true, clientFactory: clients.factory });
    const read = [];
    for await (const r of source.open(null)) read.push(r);
    expect(read).toHaveLength(6);
    expect(await source.backlog({ t: { 0: 3, 1: 1 } })).toEqual([
      { partition: 't/0', end: 3, committed: 3 },
      { partition: 't/1', end: 3, committed: 1 },
    ]);
    await source.close();
    expect([clients.made, clients.closed]).toEqual([1, 1]);

    // A scrape that comes in after the pipeline closed its source (the lag gauges ask for the backlog).
    await expect(source.backlog({ t: { 0: 3, 1: 3 } })).rejects.toThrow(SourceError);
    await expect(source.committed({ t: { 0: 3, 1: 3 } }, { table: '/w/db.db/t', commitUser: 'u' })).rejects.toThrow(/is closed/);
    expect(clients.made).toBe(1);

    // A new run of the same source object connects again.
    const again = [];
    for await (const r of source.open({ t: { 0: 2, 1: 3 } })) again.push(r);
    expect(again).toHaveLength(1);
    expect(clients.made).toBe(2);
    await source.close();
    expect(clients.closed).toBe(2);
  });

  it('a stop ends the read and drops its connection; the last group commit carries the stop signal and then the source closes', async () => {
    const clients = new Clients(1_000);
    const source = new KafkaSource({ connection: { brokers: ['b:1'] }, topics: ['t'], groupId: 'g', clientFactory: clients.factory });
    const stop = new AbortController();
    let read = 0;
    for await (const r of source.open(null, { signal: stop.signal })) {
      expect(r.value).toHaveProperty('id');
      if (++read === 5) stop.abort();
    }
    expect(read).toBe(5);
    // The read's own connection is gone, but the committed offsets still reach the group.
    expect(clients.closed).toBe(1);
    await source.committed({ t: { 0: 3, 1: 2 } }, { table: '/w/db.db/t', commitUser: 'u' });
    expect(clients.commits).toHaveLength(1);
    expect(clients.commits[0]!.signal?.aborted).toBe(true);
    await source.close();
    expect([clients.made, clients.closed]).toEqual([2, 2]);
  });
});
