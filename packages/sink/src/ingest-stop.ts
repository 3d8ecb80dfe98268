/**
 * The bounded stop of a pipeline: once its stop signal aborts, the last checkpoint has
 * `stopTimeoutMs` to commit; past it, the checkpoint is abandoned at its next step.
 */
import type { IngestObserver } from './ingest-options.js';

/** When the stop signal aborted, and whether the stop has overrun its timeout. Checked between steps: no timer. */
export class StopClock {
  private abortedAt: number | null = null;
  private readonly onAbort = (): void => {
    if (this.abortedAt !== null) return;
    this.abortedAt = Date.now();
    this.observer?.stopping?.();
  };

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly timeoutMs: number | undefined,
    private readonly observer: IngestObserver | undefined,
  ) {
    if (signal?.aborted) this.onAbort();
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** True once the stop has taken `timeoutMs` or longer. */
  get overdue(): boolean {
    return this.abortedAt !== null && this.timeoutMs !== undefined && Date.now() - this.abortedAt >= this.timeoutMs;
  }

  /** Stops listening to the signal (it may outlive the run). */
  dispose(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** Thrown inside a run when the stop overran its timeout: checkpoint `checkpointId` is abandoned. */
export class CheckpointAbandoned extends Error {
  constructor(readonly checkpointId: bigint) {
    super(`checkpoint ${checkpointId} abandoned: the stop took longer than its timeout`);
  }
}
