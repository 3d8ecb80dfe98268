/**
 * What the Kafka source needs from a Kafka client, independent of the client library: partition
 * metadata, watermarks, offsets by timestamp, a consumer group's offsets (read, and committed for
 * monitoring without joining the group), and fetches from explicit offsets. The one implementation
 * (`kafkajs-client.ts`) is the only module that imports a Kafka library, so a switch of library
 * touches it alone; unit tests use an in-memory implementation.
 */

/** How to reach and authenticate to a Kafka cluster. */
export interface KafkaConnectionSettings {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /** Client id sent with every request (default `tidemark`). */
  readonly clientId?: string;
  /** TLS: `true` for the system's CAs, or PEM material (strings, not file names). */
  readonly ssl?: boolean | KafkaTlsSettings;
  readonly sasl?: KafkaSaslSettings;
  /** Milliseconds to wait for a connection (default 3,000). */
  readonly connectionTimeoutMs?: number;
  /** Milliseconds to wait for a response, on top of a fetch's wait (default 30,000). */
  readonly requestTimeoutMs?: number;
  /** Attempts of a request that failed with a retriable error before it fails (default 8). */
  readonly retries?: number;
}

/** TLS material, as PEM text. */
export interface KafkaTlsSettings {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly passphrase?: string;
  /** Default true; false accepts any certificate (tests only). */
  readonly rejectUnauthorized?: boolean;
  /** Server name for SNI and the certificate check, when it differs from the broker host. */
  readonly servername?: string;
}

/** SASL mechanisms the source supports. */
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type KafkaSaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface KafkaSaslSettings {
  readonly mechanism: KafkaSaslMechanism;
  readonly username: string;
  readonly password: string;
}

/** A partition's first available offset (`low`) and the offset the next message will get (`high`). */
export interface PartitionWatermarks {
  readonly partition: number;
  readonly low: number;
  readonly high: number;
}

/** One message as fetched: payloads are raw bytes; `null` key or value as on the wire. */
export interface KafkaMessage {
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** Milliseconds since the epoch (create or log-append time). */
  readonly timestamp: number;
}

/** Where to fetch one partition from. */
export interface FetchRequest {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

/** What a fetch returned for one partition. */
export type FetchResult =
  | {
      readonly topic: string;
      readonly partition: number;
      readonly kind: 'messages';
      /** Messages at or after the requested offset, in offset order (transaction markers and aborted messages removed). */
      readonly messages: readonly KafkaMessage[];
      /** Where the next fetch of this partition starts (past markers and gaps the fetch covered). */
      readonly nextOffset: number;
      readonly highWatermark: number;
    }
  | {
      readonly topic: string;
      readonly partition: number;
      /** The requested offset is below the low or above the high watermark. */
      readonly kind: 'offset-out-of-range';
    };

/**
 * The client the Kafka source runs on. Every method retries retriable errors itself; once the
 * `signal` of a call has aborted, it retries no more and rejects (a pipeline stopped while the
 * brokers are down ends at once instead of after the retries).
 */
export interface KafkaClient {
  /** Partition ids of each topic (fresh metadata); a topic that does not exist throws {@link KafkaTopicMissingError}. */
  partitions(topics: readonly string[], options?: KafkaCallOptions): Promise<Map<string, number[]>>;
  watermarks(topic: string, partitions: readonly number[], options?: KafkaCallOptions): Promise<PartitionWatermarks[]>;
  /** Per partition, the first offset whose timestamp is ≥ `timestampMs` (the high watermark when there is none). */
  offsetsForTimestamp(
    topic: string,
    partitions: readonly number[],
    timestampMs: number,
    options?: KafkaCallOptions,
  ): Promise<Map<number, number>>;
  /** A consumer group's committed offset per partition (absent when it committed none). */
  groupOffsets(groupId: string, topic: string, partitions: readonly number[], options?: KafkaCallOptions): Promise<Map<number, number>>;
  /**
   * Commits offsets to a consumer group without joining it (for lag monitoring). Once `signal` has
   * aborted, a failed attempt is not retried.
   */
  commitGroupOffsets(groupId: string, offsets: readonly FetchRequest[], options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Fetches the partitions from their offsets, waiting up to `maxWaitMs` for data. Rejects when
   * `signal` aborts (the request's connection may be closed).
   */
  fetch(requests: readonly FetchRequest[], options: { maxWaitMs: number; maxBytes: number; signal?: AbortSignal }): Promise<FetchResult[]>;
  /** Closes every connection. */
  close(): Promise<void>;
}

/** Per-call options of {@link KafkaClient} methods. */
export interface KafkaCallOptions {
  readonly signal?: AbortSignal;
}

/** Makes a client from connection settings (a source may open several over its life); `logger` hears of retries. */
export type KafkaClientFactory = (settings: KafkaConnectionSettings, logger?: { warn(message: string): void }) => KafkaClient;
