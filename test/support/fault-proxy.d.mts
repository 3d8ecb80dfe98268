/** Types of fault-proxy.mjs (plain JavaScript so that the chaos harness can load it). */
export type FaultKind = 'slowdown' | 'internal' | 'reset-before' | 'reset-mid-body' | 'truncate-body' | 'latency';
export declare const FAULT_KINDS: readonly FaultKind[];
export declare class FaultProxy {
  constructor(upstream: string, options?: { rate?: number; kinds?: readonly FaultKind[]; seed?: number; latencyMs?: [number, number] });
  /** Requests seen. */
  readonly requests: number;
  /** Faults injected, by kind. */
  readonly injected: Record<FaultKind, number>;
  /** Total faults injected. */
  readonly faults: number;
  /** From now on, requests are never answered nor forwarded, until close() destroys their connections. */
  stall(): void;
  listen(port?: number): Promise<string>;
  close(): Promise<void>;
}
