/**
 * {@link KafkaClient} on kafkajs, the one module that imports a Kafka library. kafkajs has no
 * public `assign()`: its consumer needs group membership (seconds to join, a dead member's session
 * to expire after a crash) and silently resets an out-of-range offset. So the source reads through
 * kafkajs's cluster and broker objects instead (the `Cluster` the client builds for its producer
 * and consumer, metadata, leader lookup, `broker.fetch` from explicit offsets, ListOffsets,
 * OffsetFetch/OffsetCommit on the group coordinator with generation -1, which commits without
 * joining). These are internals of kafkajs 2.2 (unchanged since 2023); the facts checked against
 * the test broker are in the repository's shared docs (kafka-test-broker.md).
 */
import { createRequire } from 'node:module';
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { KafkaRequestError, KafkaSettingsError, KafkaTopicMissingError, KafkaUnavailableError } from './kafka-errors.js';
import type {
  FetchRequest,
  FetchResult,
  KafkaCallOptions,
  KafkaClient,
  KafkaConnectionSettings,
  KafkaMessage,
  PartitionWatermarks,
} from './kafka-client.js';

const require = createRequire(import.meta.url);

/** The parts of a kafkajs record the source reads. */
interface RawMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly batchContext?: { readonly firstOffset: string; readonly lastOffsetDelta: number };
}
interface RawPartition {
  readonly partition: number;
  readonly highWatermark: string;
  readonly messages: RawMessage[];
  readonly abortedTransactions?: unknown[];
}
interface Broker {
  fetch(request: unknown): Promise<{ responses: Array<{ topicName: string; partitions: RawPartition[] }> }>;
  offsetCommit(request: unknown): Promise<unknown>;
  offsetFetch(request: unknown): Promise<{
    responses: Array<{ topic: string; partitions: Array<{ partition: number; offset: string; errorCode?: number }> }>;
  }>;
}
interface Cluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number; leader: number }>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(q: { nodeId: string }): Promise<Broker>;
  findGroupCoordinator(q: { groupId: string }): Promise<Broker>;
  fetchTopicsOffset(
    topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning?: boolean; fromTimestamp?: number }>,
  ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
}
interface KafkaJSError extends Error {
  readonly retriable?: boolean;
  readonly type?: string;
}

/** kafkajs's batch filter: drops messages before the requested offset, transaction markers and aborted messages. */
const Batch = require('kafkajs/src/consumer/batch') as new (
  topic: string,
  fetchedOffset: string,
  partition: RawPartition,
) => { readonly messages: RawMessage[] };

const READ_COMMITTED = 1;

/** Errors after which metadata is refreshed before the retry (leadership or the topic moved). */
const METADATA_ERRORS = new Set([
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'NOT_COORDINATOR',
  'COORDINATOR_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
]);

/** Errors of a cluster that refuses this client's user: settings to fix, not retried. */
const AUTHORIZATION_ERRORS = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
]);

function longToNumber(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new KafkaRequestError(`${what} ${text} is not an integer below 2^53`);
  return n;
}

function saslOf(settings: KafkaConnectionSettings): SASLOptions | undefined {
  const s = settings.sasl;
  if (s === undefined) return undefined;
  return { mechanism: s.mechanism, username: s.username, password: s.password } as SASLOptions;
}

/** A {@link KafkaClient} on kafkajs (see the module comment). */
export function kafkajsClient(settings: KafkaConnectionSettings, logger?: { warn(message: string): void }): KafkaClient {
  return new KafkajsClient(settings, logger);
}

class KafkajsClient implements KafkaClient {
  private readonly cluster: Cluster;
  private readonly retries: number;
  private connected: Promise<void> | undefined;
  private readonly topics = new Set<string>();
  private closed = false;

  constructor(
    private readonly settings: KafkaConnectionSettings,
    private readonly logger?: { warn(message: string): void },
  ) {
    this.retries = settings.retries ?? 8;
    const sasl = saslOf(settings);
    const config: KafkaConfig = {
      brokers: [...settings.brokers],
      clientId: settings.clientId ?? 'tidemark',
      connectionTimeout: settings.connectionTimeoutMs ?? 3_000,
      requestTimeout: settings.requestTimeoutMs ?? 30_000,
      // Retries are this module's (below), so that each failure can refresh metadata first.
      retry: { retries: 0 },
      // Errors reach the caller as exceptions; kafkajs's own log lines would repeat them on stderr.
      logLevel: logLevel.NOTHING,
      ...(settings.ssl !== undefined ? { ssl: settings.ssl } : {}),
      ...(sasl !== undefined ? { sasl } : {}),
    };
    const kafka = new Kafka(config);
    // The client's private cluster factory: the same Cluster its consumer and admin use.
    const create = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
    if (create === undefined) throw new KafkaSettingsError('this kafkajs version has no cluster factory; tidemark needs kafkajs 2.2');
    const factory = (kafka as unknown as Record<symbol, (o: object) => Cluster>)[create]!;
    this.cluster = factory({ metadataMaxAge: 300_000, allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED });
  }

  private connect(): Promise<void> {
    this.connected ??= this.cluster.connect().catch((e: unknown) => {
      this.connected = undefined;
      throw e;
    });
    return this.connected;
  }

  /**
   * Runs `op` with retries of retriable errors (connection lost, leader moved, timeouts), with
   * exponential backoff from 100 ms up to 5 s; refreshes metadata before a retry.
   */
  private async retrying<T>(what: string, op: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let delay = 100;
    for (let attempt = 1; ; attempt++) {
      try {
        if (this.closed) throw new KafkaRequestError(`${what}: the Kafka client is closed`);
        await this.connect();
        return await op();
      } catch (e) {
        if (e instanceof KafkaRequestError || e instanceof KafkaTopicMissingError || signal?.aborted) throw e;
        const err = innermost(e as KafkaJSError);
        if (err.name === 'KafkaJSSASLAuthenticationError' || err.type === 'SASL_AUTHENTICATION_FAILED') {
          throw new KafkaSettingsError(`${what}: the cluster refused the SASL credentials: ${err.message}`, { cause: e });
        }
        if (err.type !== undefined && AUTHORIZATION_ERRORS.has(err.type)) {
          const user = this.settings.sasl !== undefined ? `user '${this.settings.sasl.username}'` : 'this client (no SASL user)';
          throw new KafkaSettingsError(
            `${what}: the cluster (brokers ${this.settings.brokers.join(',')}) refused access (${err.type}): ${err.message}; ` +
              `check the ACLs of ${user} for the topics and the consumer group`,
            { cause: e },
          );
        }
        const retriable = isRetriable(e as KafkaJSError);
        if (!retriable) {
          throw new KafkaRequestError(`${what} failed (brokers ${this.settings.brokers.join(',')}): ${err.message}`, { cause: e });
        }
        if (attempt >= this.retries) throw this.unavailable(what, attempt, err, e);
        this.logger?.warn(`${what}: ${err.message}; retrying in ${delay} ms (attempt ${attempt + 1} of ${this.retries})`);
        await sleep(delay, signal);
        if (signal?.aborted) throw e;
        delay = Math.min(5_000, delay * 2);
        if (err.type === undefined || METADATA_ERRORS.has(err.type) || isConnectionFailure(err)) {
          await this.cluster.refreshMetadata().catch(() => undefined);
        }
      }
    }
  }

  /** The error after the last retry: the request, the brokers, the cause and what to check. */
  private unavailable(what: string, attempts: number, err: KafkaJSError, cause: unknown): KafkaUnavailableError {
    const brokers = this.settings.brokers;
    const unreachable = isConnectionFailure(err);
    const tls = this.settings.ssl !== undefined && this.settings.ssl !== false ? 'on' : 'off';
    const sasl = this.settings.sasl?.mechanism ?? 'off';
    const check = unreachable
      ? `check the broker addresses, that this host reaches them (network, firewall, DNS) and the TLS/SASL settings (TLS ${tls}, SASL ${sasl})`
      : "check the brokers' health and the topic's partition leaders";
    return new KafkaUnavailableError(
      `${what} failed after ${attempts} attempts (brokers ${brokers.join(',')}): ${err.message}; ${check}`,
      brokers,
      attempts,
      { cause },
    );
  }

  private async target(topics: readonly string[]): Promise<void> {
    const fresh = topics.filter((t) => !this.topics.has(t));
    if (fresh.length === 0) return;
    await this.cluster.addMultipleTargetTopics(fresh);
    for (const t of fresh) this.topics.add(t);
  }

  async partitions(topics: readonly string[], options: KafkaCallOptions = {}): Promise<Map<string, number[]>> {
    return this.retrying(
      `reading the partitions of ${topics.join(', ')}`,
      async () => {
        try {
          await this.target(topics);
          await this.cluster.refreshMetadata();
        } catch (e) {
          const err = innermost(e as KafkaJSError);
          if (err.type === 'UNKNOWN_TOPIC_OR_PARTITION' || err.name === 'KafkaJSTopicMetadataNotLoaded') {
            for (const t of topics) this.topics.delete(t);
            throw new KafkaTopicMissingError(`Kafka topic ${topics.join(' or ')} does not exist on ${this.settings.brokers.join(',')}`, {
              cause: e,
            });
          }
          throw e;
        }
        const out = new Map<string, number[]>();
        for (const t of topics) {
          const ids = this.cluster
            .findTopicPartitionMetadata(t)
            .map((p) => p.partitionId)
            .sort((a, b) => a - b);
          if (ids.length === 0) throw new KafkaTopicMissingError(`Kafka topic ${t} does not exist on ${this.settings.brokers.join(',')}`);
          out.set(t, ids);
        }
        return out;
      },
      options.signal,
    );
  }

  private async listOffsets(topic: string, partitions: readonly number[], q: { fromBeginning?: boolean; fromTimestamp?: number }) {
    await this.target([topic]);
    const [r] = await this.cluster.fetchTopicsOffset([{ topic, partitions: partitions.map((partition) => ({ partition })), ...q }]);
    const out = new Map<number, number>();
    for (const p of r?.partitions ?? []) out.set(p.partition, longToNumber(p.offset, `offset of ${topic}/${p.partition}`));
    return out;
  }

  async watermarks(topic: string, partitions: readonly number[], options: KafkaCallOptions = {}): Promise<PartitionWatermarks[]> {
    return this.retrying(
      `reading the offsets of ${topic}`,
      async () => {
        const [low, high] = await Promise.all([
          this.listOffsets(topic, partitions, { fromBeginning: true }),
          this.listOffsets(topic, partitions, { fromBeginning: false }),
        ]);
        return partitions.map((partition) => ({ partition, low: low.get(partition) ?? 0, high: high.get(partition) ?? 0 }));
      },
      options.signal,
    );
  }

  async offsetsForTimestamp(
    topic: string,
    partitions: readonly number[],
    timestampMs: number,
    options: KafkaCallOptions = {},
  ): Promise<Map<number, number>> {
    return this.retrying(
      `reading the offsets of ${topic} at ${new Date(timestampMs).toISOString()}`,
      async () => {
        const [at, high] = await Promise.all([
          this.listOffsets(topic, partitions, { fromTimestamp: timestampMs }),
          this.listOffsets(topic, partitions, { fromBeginning: false }),
        ]);
        const out = new Map<number, number>();
        for (const p of partitions) {
          const o = at.get(p);
          out.set(p, o === undefined || o < 0 ? (high.get(p) ?? 0) : o);
        }
        return out;
      },
      options.signal,
    );
  }

  async groupOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
    options: KafkaCallOptions = {},
  ): Promise<Map<number, number>> {
    return this.retrying(
      `reading the offsets of consumer group ${groupId}`,
      async () => {
        // The coordinator lookup needs the cluster's metadata (the broker pool).
        await this.target([topic]);
        const coordinator = await this.cluster.findGroupCoordinator({ groupId });
        const r = await coordinator.offsetFetch({
          groupId,
          topics: [{ topic, partitions: partitions.map((partition) => ({ partition })) }],
        });
        const out = new Map<number, number>();
        for (const t of r.responses) {
          for (const p of t.partitions) {
            const o = longToNumber(p.offset, `committed offset of ${topic}/${p.partition}`);
            if (o >= 0) out.set(p.partition, o);
          }
        }
        return out;
      },
      options.signal,
    );
  }

  async commitGroupOffsets(groupId: string, offsets: readonly FetchRequest[], options: { signal?: AbortSignal } = {}): Promise<void> {
    if (offsets.length === 0) return;
    const byTopic = new Map<string, Array<{ partition: number; offset: string }>>();
    for (const o of offsets) {
      const list = byTopic.get(o.topic) ?? [];
      list.push({ partition: o.partition, offset: String(o.offset) });
      byTopic.set(o.topic, list);
    }
    await this.retrying(
      `committing offsets to consumer group ${groupId}`,
      async () => {
        await this.target([...byTopic.keys()]);
        const coordinator = await this.cluster.findGroupCoordinator({ groupId });
        // Generation -1 and no member id: a commit from outside the group (the group has no members).
        await coordinator.offsetCommit({
          groupId,
          groupGenerationId: -1,
          memberId: '',
          topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
        });
      },
      options.signal,
    );
  }

  async fetch(
    requests: readonly FetchRequest[],
    options: { maxWaitMs: number; maxBytes: number; signal?: AbortSignal },
  ): Promise<FetchResult[]> {
    const topics = [...new Set(requests.map((r) => r.topic))];
    return this.retrying(
      `fetching ${topics.join(', ')}`,
      async () => {
        await this.target(topics);
        // One request per leader, all leaders at once.
        const byLeader = new Map<string, FetchRequest[]>();
        for (const t of topics) {
          const mine = requests.filter((r) => r.topic === t);
          const leaders = this.cluster.findLeaderForPartitions(
            t,
            mine.map((r) => r.partition),
          );
          for (const [leader, ids] of Object.entries(leaders)) {
            const list = byLeader.get(leader) ?? [];
            for (const r of mine) if (ids.includes(r.partition)) list.push(r);
            byLeader.set(leader, list);
          }
        }
        if (byLeader.size === 0) throw Object.assign(new Error('no leader known for the partitions'), { retriable: true });
        // A broker returns a partition's first batch even when it is larger than this.
        const perPartition = Math.max(1, Math.floor(options.maxBytes / Math.max(1, requests.length)));
        const parts = await Promise.all(
          [...byLeader].map(async ([nodeId, list]) => {
            const broker = await this.cluster.findBroker({ nodeId });
            return this.fetchFrom(broker, list, options.maxWaitMs, options.maxBytes, perPartition);
          }),
        );
        return parts.flat();
      },
      options.signal,
    );
  }

  private async fetchFrom(
    broker: Broker,
    list: readonly FetchRequest[],
    maxWaitMs: number,
    maxBytes: number,
    perPartition: number,
  ): Promise<FetchResult[]> {
    const topics = new Map<string, Array<{ partition: number; fetchOffset: string; maxBytes: number }>>();
    const asked = new Map<string, number>();
    for (const r of list) {
      const parts = topics.get(r.topic) ?? [];
      parts.push({ partition: r.partition, fetchOffset: String(r.offset), maxBytes: perPartition });
      topics.set(r.topic, parts);
      asked.set(`${r.topic}\u0000${r.partition}`, r.offset);
    }
    let response;
    try {
      response = await broker.fetch({
        replicaId: -1,
        isolationLevel: READ_COMMITTED,
        maxWaitTime: maxWaitMs,
        minBytes: 1,
        maxBytes,
        topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
      });
    } catch (e) {
      const err = e as KafkaJSError & { topic?: string; partition?: number };
      // kafkajs fails the whole request for one partition's out-of-range offset: report that partition.
      if (err.name === 'KafkaJSOffsetOutOfRange' && err.topic !== undefined && err.partition !== undefined) {
        return [{ topic: err.topic, partition: err.partition, kind: 'offset-out-of-range' }];
      }
      throw e;
    }
    const out: FetchResult[] = [];
    for (const t of response.responses) {
      for (const p of t.partitions) {
        const from = asked.get(`${t.topicName}\u0000${p.partition}`);
        if (from === undefined) continue;
        out.push(this.decodePartition(t.topicName, from, p));
      }
    }
    return out;
  }

  private decodePartition(topic: string, from: number, p: RawPartition): FetchResult {
    const highWatermark = longToNumber(p.highWatermark, `high watermark of ${topic}/${p.partition}`);
    // The next fetch starts after the last record batch the response held, including batches
    // that hold only transaction markers or aborted messages (else the loop would fetch them again).
    let nextOffset = from;
    for (const m of p.messages) {
      const c = m.batchContext;
      const end = c !== undefined ? Number(c.firstOffset) + c.lastOffsetDelta + 1 : Number(m.offset) + 1;
      if (end > nextOffset) nextOffset = end;
    }
    const kept = p.messages.length === 0 ? [] : new Batch(topic, String(from), p).messages;
    const messages: KafkaMessage[] = new Array<KafkaMessage>(kept.length);
    for (let i = 0; i < kept.length; i++) {
      const m = kept[i]!;
      messages[i] = { offset: Number(m.offset), key: m.key, value: m.value, timestamp: Number(m.timestamp) };
    }
    return { topic, partition: p.partition, kind: 'messages', messages, nextOffset, highWatermark };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.cluster.disconnect().catch(() => undefined);
  }
}

/**
 * The error under kafkajs's own retrier: its cluster and broker pool run every connect and
 * metadata request through a retrier (configured here with 0 retries), which wraps the failure in
 * KafkaJSNumberOfRetriesExceeded (a retriable one) or KafkaJSNonRetriableError.
 */
function innermost(err: KafkaJSError): KafkaJSError {
  let e = err;
  for (let i = 0; i < 4 && (e.name === 'KafkaJSNumberOfRetriesExceeded' || e.name === 'KafkaJSNonRetriableError'); i++) {
    const cause = (e as { cause?: unknown }).cause;
    if (!(cause instanceof Error) || cause === e) break;
    e = cause as KafkaJSError;
  }
  return e;
}

/** Worth another attempt: a connection lost or refused, a timeout, or an error Kafka marks retriable. */
function isRetriable(err: KafkaJSError): boolean {
  // kafkajs's retrier gave up on an error it would have retried: ours retries (with metadata refresh).
  if (err.name === 'KafkaJSNumberOfRetriesExceeded') return true;
  const e = innermost(err);
  return err.retriable === true || isConnectionFailure(e);
}

/** The brokers could not be reached or stopped answering (as opposed to answering with an error). */
function isConnectionFailure(err: KafkaJSError): boolean {
  return err.name === 'KafkaJSConnectionError' || err.name === 'KafkaJSRequestTimeoutError' || err.name === 'KafkaJSConnectionClosedError';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
