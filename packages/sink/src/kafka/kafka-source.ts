/**
 * `KafkaSource`: a {@link ReplayableSource} over Kafka topics, read by explicit partition
 * assignment (no consumer-group membership) with a fetch loop from the checkpoint's offsets. See
 * `kafka-offsets.ts` for the offset, `kafka-format.ts` for how messages become records.
 *
 * - First run (no offset): each partition starts at `start`: `earliest` (default), `latest`, a
 *   timestamp, or a consumer group's committed offsets (`group`, earliest where it has none).
 *   Later runs start exactly at the stored offset; the group is never trusted for that.
 * - Partitions added to a topic later are found every `partitionDiscoveryMs` and read from their
 *   earliest offset (not with an explicit `--partitions` list).
 * - An offset that no longer exists (retention) or lies beyond the partition's end stops the
 *   pipeline with {@link KafkaOffsetOutOfRangeError}, naming topic, partition and the range.
 * - `untilEnd`: ends once every assigned partition reached the high watermark it had at start.
 * - After each committed checkpoint, {@link KafkaSource.committed} commits its offsets to a
 *   consumer group (for lag tools only).
 */
import type { SourceOffset } from '../checkpoint-state.js';
import { SourceError } from '../errors.js';
import type { ReplayableSource, SourceBacklog, SourceOpenOptions, SourceRecord } from '../source.js';
import type {
  FetchRequest,
  FetchResult,
  KafkaCallOptions,
  KafkaClient,
  KafkaClientFactory,
  KafkaConnectionSettings,
} from './kafka-client.js';
import { KafkaOffsetOutOfRangeError, KafkaSettingsError } from './kafka-errors.js';
import { messageDecoder, type KafkaFormat, type MessageDecoder, KAFKA_FORMATS } from './kafka-format.js';
import {
  assigned,
  assignmentLabel,
  offsetOf,
  parseOffset,
  type KafkaAssignment,
  type PartitionPosition,
  type PositionMap,
} from './kafka-offsets.js';
import { kafkajsClient } from './kafkajs-client.js';

/** Where a pipeline's first run starts reading. */
export type KafkaStart = 'earliest' | 'latest' | 'group' | { readonly timestampMs: number };

/** Settings of a {@link KafkaSource}. */
export interface KafkaSourceOptions {
  readonly connection: KafkaConnectionSettings;
  readonly topics: readonly string[];
  /** Message format (default `json`). */
  readonly format?: KafkaFormat;
  /** The table's primary-key columns (empty or absent for an append table): keys, tombstones and row kinds depend on it. */
  readonly primaryKeys?: readonly string[];
  /** Partitions this pipeline reads (default all, including ones added later). */
  readonly assignment?: KafkaAssignment;
  /** First run only (default `earliest`). */
  readonly start?: KafkaStart;
  /**
   * Consumer group the committed offsets are reported to (and read from with `start: 'group'`).
   * Default: `tidemark-<table>-<commitUser>` (see {@link defaultGroupId}).
   */
  readonly groupId?: string;
  /** End once every partition reached the high watermark it had when the source was opened. */
  readonly untilEnd?: boolean;
  /** How often to look for new partitions, ms (default 30,000; 0 = never). */
  readonly partitionDiscoveryMs?: number;
  /** Longest wait of one fetch for new messages, ms (default 500). */
  readonly maxWaitMs?: number;
  /** Bytes one fetch asks for (default 8 MiB). */
  readonly fetchMaxBytes?: number;
  /** The client (default kafkajs); tests give an in-memory one. */
  readonly clientFactory?: KafkaClientFactory;
  readonly logger?: { warn(message: string): void };
}

/** The consumer group the offsets go to when no `groupId` is given: readable, one per pipeline. */
export function defaultGroupId(table: string, commitUser: string): string {
  const name = table
    .replace(/\/+$/, '')
    .split('/')
    .slice(-2)
    .join('.')
    .replace(/[^A-Za-z0-9._-]/g, '_');
  return `tidemark-${name}-${commitUser}`;
}

/** A replayable source over Kafka topics; see the module comment. */
export class KafkaSource implements ReplayableSource<Record<string, unknown>> {
  readonly id: string;
  readonly bounded: boolean;
  private readonly topics: readonly string[];
  private readonly assignment: KafkaAssignment;
  private readonly decode: MessageDecoder;
  private shared: KafkaClient | undefined;
  /** Set by {@link close}, cleared by {@link open}: nothing reconnects in between. */
  private closed = false;
  /** The stop signal of the last {@link open}. */
  private stop: AbortSignal | undefined;

  constructor(private readonly options: KafkaSourceOptions) {
    const format = options.format ?? 'json';
    if (!(KAFKA_FORMATS as readonly string[]).includes(format)) {
      throw new KafkaSettingsError(`unknown Kafka message format '${String(format)}'; use ${KAFKA_FORMATS.join(', ')}`);
    }
    if (options.topics.length === 0) throw new KafkaSettingsError('a Kafka source needs at least one topic');
    if (options.connection.brokers.length === 0) throw new KafkaSettingsError('a Kafka source needs at least one broker (host:port)');
    if (options.start === 'group' && options.groupId === undefined) {
      throw new KafkaSettingsError("start position 'group' needs the consumer group's id (--group-id)");
    }
    this.topics = [...options.topics];
    this.assignment = options.assignment ?? { kind: 'all' };
    this.decode = messageDecoder(format, options.primaryKeys ?? []);
    this.bounded = options.untilEnd === true;
    // The brokers are not part of the identity (a cluster's addresses change); the topics, the
    // format and the assignment are: a state of another split must not be resumed by this one.
    this.id = `kafka:${format}:${this.topics.join(',')}${assignmentLabel(this.assignment)}`;
  }

  private client(): KafkaClient {
    // A lag scrape or a group commit after close() must not open a connection nobody closes.
    if (this.closed) throw new SourceError(`Kafka source ${this.id} is closed`);
    this.shared ??= (this.options.clientFactory ?? kafkajsClient)(this.options.connection, this.options.logger);
    return this.shared;
  }

  /** The stop signal of the open read, for the client's calls: once it aborts, they retry no more. */
  private callOptions(): KafkaCallOptions {
    return this.stop !== undefined ? { signal: this.stop } : {};
  }

  /**
   * Closes the connections; call once the pipeline is done. Until the next {@link open},
   * {@link backlog} and {@link committed} fail instead of connecting again.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.disconnect();
  }

  /** Closes the connections; the next request reconnects. */
  private async disconnect(): Promise<void> {
    const c = this.shared;
    this.shared = undefined;
    await c?.close();
  }

  /** This pipeline's partitions of each topic, now. */
  private async assignedPartitions(): Promise<Map<string, number[]>> {
    const all = await this.client().partitions(this.topics, this.callOptions());
    const out = new Map<string, number[]>();
    for (const [t, ids] of all) {
      const mine = ids.filter((p) => assigned(this.assignment, p));
      out.set(t, mine);
    }
    if (this.assignment.kind === 'partitions') {
      for (const p of this.assignment.partitions) {
        for (const [t, ids] of all) {
          if (!ids.includes(p))
            throw new KafkaSettingsError(`Kafka topic ${t} has no partition ${p} (it has ${ids.length}: 0-${ids.length - 1})`);
        }
      }
    }
    return out;
  }

  /** First-run positions of `partitions` of `topic`. */
  private async startPositions(topic: string, partitions: number[], start: KafkaStart): Promise<Map<number, number>> {
    const c = this.client();
    if (start === 'earliest' || start === 'latest') {
      const w = await c.watermarks(topic, partitions, this.callOptions());
      return new Map(w.map((x) => [x.partition, start === 'earliest' ? x.low : x.high]));
    }
    if (start === 'group') {
      const [committed, w] = await Promise.all([
        c.groupOffsets(this.options.groupId!, topic, partitions, this.callOptions()),
        c.watermarks(topic, partitions, this.callOptions()),
      ]);
      return new Map(w.map((x) => [x.partition, committed.get(x.partition) ?? x.low]));
    }
    return c.offsetsForTimestamp(topic, partitions, start.timestampMs, this.callOptions());
  }

  /** The positions to read from: the stored offset, first-run start positions, earliest for partitions new since. */
  private async positions(from: SourceOffset): Promise<PositionMap> {
    const current = await this.assignedPartitions();
    const stored = from === null ? null : parseOffset(from, this.topics, this.id);
    const out: PositionMap = new Map();
    for (const [topic, ids] of current) {
      const mine = new Map<number, PartitionPosition>();
      const known = stored?.get(topic);
      for (const [p, pos] of known ?? []) {
        if (!ids.includes(p)) {
          throw new SourceError(
            `the checkpoint of Kafka source ${this.id} holds partition ${topic}/${p}, which is not assigned to it now (the topic lost partitions?)`,
          );
        }
        mine.set(p, { ...pos });
      }
      const missing = ids.filter((p) => !mine.has(p));
      if (missing.length > 0) {
        const starts = await this.startPositions(topic, missing, stored === null ? (this.options.start ?? 'earliest') : 'earliest');
        for (const p of missing) mine.set(p, { next: starts.get(p) ?? 0, skip: 0 });
      }
      out.set(topic, mine);
    }
    return out;
  }

  /** Throws when a position lies outside its partition's offsets. */
  private async checkRange(topic: string, partition: number, next: number, known?: { low: number; high: number }): Promise<void> {
    const w = known ?? (await this.client().watermarks(topic, [partition], this.callOptions()))[0];
    if (w === undefined || (next >= w.low && next <= w.high)) return;
    const why =
      next < w.low
        ? 'retention deleted messages this pipeline has not read yet'
        : 'the partition ends before it (was the topic deleted and recreated?)';
    throw new KafkaOffsetOutOfRangeError(
      `Kafka topic ${topic} partition ${partition}: offset ${next} is out of range (the partition holds offsets ${w.low} to ${w.high}): ${why}. ` +
        'Nothing was skipped; the pipeline stops rather than jump. Re-ingest the missing range from elsewhere, or start a new pipeline ' +
        '(a fresh --state) at a position you choose (--start).',
      topic,
      partition,
      next,
      w.low,
      w.high,
    );
  }

  open(from: SourceOffset, options: SourceOpenOptions = {}): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    this.closed = false;
    this.stop = options.signal;
    return this.read(from, options.signal);
  }

  private async *read(from: SourceOffset, signal: AbortSignal | undefined): AsyncGenerator<SourceRecord<Record<string, unknown>>> {
    if (signal?.aborted) return;
    const client = this.client();
    let positions: PositionMap;
    let ends: Map<string, number>;
    try {
      positions = await this.positions(from);
      ends = await this.endsAtStart(positions);
    } catch (e) {
      // Stopped while the brokers were being asked (the client retries no more then): nothing was read.
      if (signal?.aborted) {
        await this.disconnect();
        return;
      }
      throw e;
    }
    // Where the next fetch of each partition starts: past transaction markers that made no record.
    const fetchAt = new Map<string, number>();
    for (const [topic, parts] of positions) for (const [p, pos] of parts) fetchAt.set(`${topic}/${p}`, pos.next);
    const untilEnd = this.options.untilEnd === true;
    const discoveryMs = this.options.partitionDiscoveryMs ?? 30_000;
    const discover = !untilEnd && discoveryMs > 0 && this.assignment.kind !== 'partitions';
    let lastDiscovery = Date.now();
    const fetchOptions = {
      maxWaitMs: this.options.maxWaitMs ?? 500,
      maxBytes: this.options.fetchMaxBytes ?? 8 * 1024 * 1024,
      ...(signal ? { signal } : {}),
    };
    const abort = abortedPromise(signal);
    // One fetch ahead: the next one is on the wire while this one's records are handed out.
    const startFetch = (): Promise<FetchResult[]> | undefined => {
      const list = fetchRequests(positions, fetchAt, untilEnd ? ends : undefined);
      if (list.length === 0) return undefined;
      const p = client.fetch(list, fetchOptions);
      p.catch(() => undefined); // awaited below; an abort may leave it behind
      return p;
    };
    try {
      let pending = startFetch();
      while (pending !== undefined) {
        const results = await Promise.race([pending, abort.aborted]);
        if (results === 'aborted') return;
        await this.advanceFetchPositions(results, fetchAt);
        if (discover && Date.now() - lastDiscovery >= discoveryMs) {
          lastDiscovery = Date.now();
          await this.addNewPartitions(positions, fetchAt);
        }
        pending = startFetch();
        for (const r of results) {
          const stopped = yield* this.recordsOf(r, positions, signal);
          if (stopped) return;
        }
      }
    } finally {
      abort.dispose();
      // A fetch left waiting on the broker ends with its connection (the pipeline may still
      // report its last offsets to the group: that reconnects).
      if (signal?.aborted) await this.disconnect();
    }
  }

  /** The end of each partition at start (for `untilEnd`), range-checking every position on the way. */
  private async endsAtStart(positions: PositionMap): Promise<Map<string, number>> {
    const ends = new Map<string, number>();
    for (const [topic, parts] of positions) {
      const ids = [...parts.keys()];
      if (ids.length === 0) continue;
      for (const w of await this.client().watermarks(topic, ids, this.callOptions())) {
        ends.set(`${topic}/${w.partition}`, w.high);
        await this.checkRange(topic, w.partition, parts.get(w.partition)!.next, w);
      }
    }
    return ends;
  }

  /** Moves each partition's next fetch past what `results` covered; an out-of-range answer stops the pipeline. */
  private async advanceFetchPositions(results: readonly FetchResult[], fetchAt: Map<string, number>): Promise<void> {
    for (const r of results) {
      if (r.kind === 'offset-out-of-range') {
        await this.checkRange(r.topic, r.partition, fetchAt.get(`${r.topic}/${r.partition}`) ?? 0);
        throw new SourceError(`Kafka topic ${r.topic} partition ${r.partition}: the broker answered OFFSET_OUT_OF_RANGE`);
      }
      const key = `${r.topic}/${r.partition}`;
      if (r.nextOffset > (fetchAt.get(key) ?? 0)) fetchAt.set(key, r.nextOffset);
    }
  }

  /**
   * The records of one fetched partition, each carrying the offset after it; then a position-only
   * record when messages that made no record moved the position. Returns true when `signal`
   * aborted after a record was handed out (the read ends there).
   */
  private *recordsOf(
    r: FetchResult,
    positions: PositionMap,
    signal: AbortSignal | undefined,
  ): Generator<SourceRecord<Record<string, unknown>>, boolean> {
    if (r.kind !== 'messages' || (r.messages.length === 0 && r.nextOffset <= positions.get(r.topic)!.get(r.partition)!.next)) return false;
    const pos = positions.get(r.topic)!.get(r.partition)!;
    const before = pos.next;
    let handedOut = pos.next;
    for (const m of r.messages) {
      if (m.offset < pos.next) continue;
      const where = `kafka ${r.topic}/${r.partition} offset ${m.offset}`;
      const rows = this.decode(m.key, m.value, where);
      const first = m.offset === pos.next ? pos.skip : 0;
      for (let i = first; i < rows.length; i++) {
        if (i === rows.length - 1) {
          pos.next = m.offset + 1;
          pos.skip = 0;
        } else {
          pos.next = m.offset;
          pos.skip = i + 1;
        }
        yield { value: rows[i]!, offset: offsetOf(positions), position: where };
        handedOut = pos.next;
        if (signal?.aborted) return true;
      }
      if (rows.length === 0 || first >= rows.length) {
        pos.next = m.offset + 1;
        pos.skip = 0;
      }
    }
    // Messages that made no records (tombstones, transaction markers, aborted messages) at
    // the end of what was fetched: the position moves past them too.
    if (pos.skip === 0 && r.nextOffset > pos.next) pos.next = r.nextOffset;
    if (pos.next !== handedOut && pos.next !== before) {
      yield {
        value: {},
        offset: offsetOf(positions),
        position: `kafka ${r.topic}/${r.partition} offset ${pos.next - 1}`,
        positionOnly: true,
      };
      if (signal?.aborted) return true;
    }
    return false;
  }

  /** Partitions that appeared since the last look: read from their earliest offset. */
  private async addNewPartitions(positions: PositionMap, fetchAt: Map<string, number>): Promise<void> {
    const now = await this.assignedPartitions();
    for (const [topic, ids] of now) {
      const parts = positions.get(topic)!;
      const fresh = ids.filter((p) => !parts.has(p));
      if (fresh.length === 0) continue;
      for (const w of await this.client().watermarks(topic, fresh, this.callOptions())) {
        parts.set(w.partition, { next: w.low, skip: 0 });
        fetchAt.set(`${topic}/${w.partition}`, w.low);
      }
      this.options.logger?.warn(`Kafka topic ${topic} has new partition(s) ${fresh.join(', ')}: reading them from their earliest offset`);
    }
  }

  /**
   * After a checkpoint up to `offset` is committed to the table: commits the offsets to the
   * consumer group (best effort, for monitoring; a failure is logged by the caller). Once the
   * pipeline is stopping (the signal of `open` aborted) it makes one attempt, without retries: the
   * stop is bounded, and the next run reports the offsets again after its restore.
   */
  async committed(offset: SourceOffset, pipeline: { readonly table: string; readonly commitUser: string }): Promise<void> {
    if (offset === null) return;
    const groupId = this.options.groupId ?? defaultGroupId(pipeline.table, pipeline.commitUser);
    const list: FetchRequest[] = [];
    for (const [topic, parts] of parseOffset(offset, this.topics, this.id)) {
      for (const [partition, pos] of parts) list.push({ topic, partition, offset: pos.next });
    }
    const stop = this.stop;
    await this.client().commitGroupOffsets(groupId, list, stop !== undefined ? { signal: stop } : {});
  }

  /** Per assigned partition: its high watermark and the committed position (lag = end − committed). */
  async backlog(committed: SourceOffset): Promise<readonly SourceBacklog[]> {
    const stored = committed === null ? new Map<string, Map<number, PartitionPosition>>() : parseOffset(committed, this.topics, this.id);
    const out: SourceBacklog[] = [];
    for (const [topic, ids] of await this.assignedPartitions()) {
      if (ids.length === 0) continue;
      for (const w of await this.client().watermarks(topic, ids)) {
        out.push({ partition: `${topic}/${w.partition}`, end: w.high, committed: stored.get(topic)?.get(w.partition)?.next ?? w.low });
      }
    }
    return out;
  }
}

/** The fetches of the partitions still to read: with `ends` (untilEnd), not those that reached their end. */
function fetchRequests(
  positions: PositionMap,
  fetchAt: ReadonlyMap<string, number>,
  ends: ReadonlyMap<string, number> | undefined,
): FetchRequest[] {
  const out: FetchRequest[] = [];
  for (const [topic, parts] of positions) {
    for (const p of parts.keys()) {
      const key = `${topic}/${p}`;
      const done = ends !== undefined && (fetchAt.get(key) ?? 0) >= (ends.get(key) ?? 0);
      if (!done) out.push({ topic, partition: p, offset: fetchAt.get(key)! });
    }
  }
  return out;
}

/** A promise that settles when `signal` aborts (a fetch waiting for messages ends at once), and its cleanup. */
function abortedPromise(signal: AbortSignal | undefined): { readonly aborted: Promise<'aborted'>; dispose(): void } {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return {
    aborted,
    dispose: () => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    },
  };
}
