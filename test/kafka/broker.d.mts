/** Types of broker.mjs (plain JavaScript so that scripts/test.mjs, the chaos harness and benchmarks can load it). */
import type { ChildProcess } from 'node:child_process';

export declare const brokerSource: string;
export declare function ensureKafkaBroker(log?: (msg: string) => void): { binary?: string; reason?: string };
export declare function kafkaBrokerBinary(log?: (msg: string) => void): { binary?: string; reason?: string };

export declare class KafkaTestBroker {
  readonly child: ChildProcess;
  /** `127.0.0.1:p1,127.0.0.1:p2,...`; broker ids are 1..n in this order. */
  readonly bootstrap: string;
  readonly brokers: string[];
  static start(options?: { binary?: string; brokers?: number; topics?: Record<string, number> }): Promise<KafkaTestBroker>;
  command(line: string): Promise<void>;
  createTopic(name: string, partitions: number): Promise<void>;
  pushErrors(apiKey: number, codes: number[]): Promise<void>;
  clearErrors(apiKey: number): Promise<void>;
  setDown(brokerId: number): Promise<void>;
  setUp(brokerId: number): Promise<void>;
  setLeader(topic: string, partition: number, brokerId: number): Promise<void>;
  setTopicError(topic: string, code: number): Promise<void>;
  stop(): Promise<void>;
}

export declare const API_KEYS: Record<
  'Produce' | 'Fetch' | 'ListOffsets' | 'Metadata' | 'OffsetCommit' | 'OffsetFetch' | 'FindCoordinator',
  number
>;
export declare const ERROR_CODES: Record<string, number>;
