/** Types of instrumented-file-io.mjs (plain JavaScript so that benchmarks can load it). */
import type { FileIO } from '@tidemark/storage';

/** Storage request kind of each FileIO method (what an object store would bill it as). */
export declare const REQUEST_KIND: Readonly<Record<string, 'get' | 'head' | 'list' | 'put' | 'conditional-put' | 'delete'>>;

/** One storage request seen by {@link instrumentFileIO}. */
export interface ObservedRequest {
  readonly method: string;
  readonly kind: 'get' | 'head' | 'list' | 'put' | 'conditional-put' | 'delete';
  /** The first argument when it is a path. */
  readonly path: string | undefined;
  readonly args: readonly unknown[];
  /** Set when issued: no other request was in flight, so this one starts a sequential round trip. */
  newRoundTrip?: boolean;
}

export interface InstrumentHooks {
  /** Awaited (when it returns a promise) before the request is issued. */
  before?(request: ObservedRequest): void | Promise<void>;
  /** Awaited (when it returns a promise) after a request that succeeded, before its caller sees the result. */
  after?(request: ObservedRequest, outcome: { value: unknown }): void | Promise<void>;
  start?(request: ObservedRequest): void;
  end?(request: ObservedRequest, outcome: { value?: unknown; error?: unknown }): void;
  /** Delay of every request in ms, or a function read at each request. */
  latencyMs?: number | (() => number);
}

/** Wraps a FileIO so that every storage request reports to `hooks` (see the .mjs for the rules). */
export declare function instrumentFileIO<T extends FileIO>(inner: T, hooks?: InstrumentHooks): T;
