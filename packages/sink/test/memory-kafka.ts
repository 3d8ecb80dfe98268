/**
 * An in-memory {@link KafkaClient} for unit tests: topics as arrays of messages, `low` drops a
 * partition's head as retention does, and every group commit is recorded.
 */
import type { FetchRequest, FetchResult, KafkaClient } from '../src/index.js';

interface Msg {
  value: string | null;
  timestamp: number;
}

/** Topics as arrays of messages; `low` drops a partition's head as retention does. */
export class MemoryKafka implements KafkaClient {
  readonly topics = new Map<string, Msg[][]>();
  readonly low = new Map<string, number>();
  readonly commits: FetchRequest[][] = [];

  add(topic: string, partition: number, value: string | null, timestamp = 0): void {
    const parts = this.topics.get(topic)!;
    parts[partition]!.push({ value, timestamp });
  }
  async partitions(topics: readonly string[]): Promise<Map<string, number[]>> {
    return new Map(topics.map((t) => [t, this.topics.get(t)!.map((_, i) => i)]));
  }
  async watermarks(topic: string, partitions: readonly number[]) {
    return partitions.map((p) => ({ partition: p, low: this.low.get(`${topic}/${p}`) ?? 0, high: this.topics.get(topic)![p]!.length }));
  }
  async offsetsForTimestamp(topic: string, partitions: readonly number[], ts: number): Promise<Map<number, number>> {
    return new Map(
      partitions.map((p) => {
        const msgs = this.topics.get(topic)![p]!;
        const i = msgs.findIndex((m) => m.timestamp >= ts);
        return [p, i < 0 ? msgs.length : i];
      }),
    );
  }
  async groupOffsets(): Promise<Map<number, number>> {
    return new Map();
  }
  async commitGroupOffsets(_g: string, offsets: readonly FetchRequest[]): Promise<void> {
    this.commits.push([...offsets]);
  }
  async fetch(requests: readonly FetchRequest[]): Promise<FetchResult[]> {
    await new Promise((r) => setTimeout(r, 1));
    return requests.map((r) => {
      const msgs = this.topics.get(r.topic)![r.partition]!;
      const low = this.low.get(`${r.topic}/${r.partition}`) ?? 0;
      if (r.offset < low || r.offset > msgs.length) return { topic: r.topic, partition: r.partition, kind: 'offset-out-of-range' };
      const slice = msgs.slice(r.offset, r.offset + 3);
      return {
        topic: r.topic,
        partition: r.partition,
        kind: 'messages',
        messages: slice.map((m, i) => ({
          offset: r.offset + i,
          key: null,
          value: m.value === null ? null : Buffer.from(m.value),
          timestamp: m.timestamp,
        })),
        nextOffset: r.offset + slice.length,
        highWatermark: msgs.length,
      };
    });
  }
  async close(): Promise<void> {}
}

export function kafka(partitions: Record<string, number>): MemoryKafka {
  const k = new MemoryKafka();
  for (const [t, n] of Object.entries(partitions))
    k.topics.set(
      t,
      Array.from({ length: n }, () => []),
    );
  return k;
}
