/**
 * Prometheus metrics and health of an ingest pipeline, with prom-client (the Prometheus client
 * for Node that most services use; it renders the exposition format and runs collect callbacks
 * at scrape time). Pass an {@link IngestMetrics} as `observer` to `runIngest` and serve it with
 * `startMetricsServer`, or register its `registry` with a server of your own.
 */
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BucketCompactionReport, CommitAttemptReport } from '@tidemark/core';
import type { SourceOffset } from './checkpoint-state.js';
import type { CheckpointInfo, IngestObserver, IngestResumeInfo, IngestSummary } from './ingest-options.js';
import type { ReplayableSource, SourceBacklog } from './source.js';

/** Where a pipeline is: restoring, reading, stopping after the signal, ended, or failed. */
export type IngestState = 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

const STATES: readonly IngestState[] = ['starting', 'running', 'stopping', 'stopped', 'failed'];

/** The health of a pipeline, as its health endpoints report it. */
export interface IngestHealth {
  readonly state: IngestState;
  /** Liveness: false once the pipeline failed (restart the process). */
  readonly live: boolean;
  /** Readiness: the restore is done and the pipeline is reading (or waiting for records). */
  readonly ready: boolean;
  readonly commitUser: string | null;
  /** Last checkpoint this process committed (a decimal string: checkpoint ids are 64-bit). */
  readonly lastCheckpointId: string | null;
  /** See `tidemark_ingest_last_commit_age_seconds`. */
  readonly lastCommitAgeSeconds: number;
  /** Why the pipeline failed. */
  readonly error?: string;
}

/** Settings of {@link IngestMetrics}. */
export interface IngestMetricsOptions {
  /** The registry to register the metrics in (default: a registry of their own). */
  readonly registry?: Registry;
  /** Prefix of every metric name (default `tidemark_ingest_`). */
  readonly prefix?: string;
  /** Also collect prom-client's process metrics: CPU, memory, event-loop lag, GC (default false). */
  readonly processMetrics?: boolean;
  /** Clock (tests). */
  readonly now?: () => number;
}

type PromClient = typeof import('prom-client');
let promClient: PromClient | undefined;
/** prom-client, loaded on first use: every `tidemark` command imports this package, few serve metrics. */
function prom(): PromClient {
  promClient ??= createRequire(import.meta.url)('prom-client') as PromClient;
  return promClient;
}

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The metrics of one pipeline; an {@link IngestObserver}. See docs/exactly-once.md for each metric. */
export class IngestMetrics implements IngestObserver {
  readonly registry: Registry;
  private readonly now: () => number;
  private state: IngestState = 'starting';
  private source: ReplayableSource<unknown> | null = null;
  private committed: SourceOffset = null;
  private commitUser: string | null = null;
  private lastCheckpointId: bigint | null = null;
  private readonly startedAt: number;
  private lastCommitAt: number | null = null;
  private error: string | undefined;
  /** One backlog request per scrape, shared by the gauges that show it. */
  private backlogScrape: Promise<readonly SourceBacklog[] | null> | null = null;
  private readonly records: Counter;
  private readonly checkpoints: Counter;
  private readonly checkpointSeconds: Histogram;
  private readonly prepareSeconds: Histogram;
  private readonly attempts: Counter<'outcome'>;
  private readonly retries: Counter;
  private readonly lastCommitTimestamp: Gauge;
  private readonly compactions: Counter;
  private readonly compactionsDropped: Counter;
  private readonly compactionFiles: Counter<'side'>;
  private readonly compactionSeconds: Histogram;
  private readonly backlogErrors: Counter;

  constructor(options: IngestMetricsOptions = {}) {
    const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = prom();
    const registry = options.registry ?? new Registry();
    this.registry = registry;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    const p = options.prefix ?? 'tidemark_ingest_';
    const registers = [registry];
    if (options.processMetrics) collectDefaultMetrics({ register: registry });
    this.records = new Counter({ name: `${p}records_total`, help: 'Records read from the source by this process.', registers });
    this.checkpoints = new Counter({ name: `${p}checkpoints_total`, help: 'Checkpoints committed by this process.', registers });
    this.checkpointSeconds = new Histogram({
      name: `${p}checkpoint_duration_seconds`,
      help: "From a checkpoint's trigger to its commit.",
      buckets: SECONDS,
      registers,
    });
    this.prepareSeconds = new Histogram({
      name: `${p}checkpoint_prepare_seconds`,
      help: 'Of a checkpoint: the writers flushing their files and finishing their compactions.',
      buckets: SECONDS,
      registers,
    });
    this.attempts = new Counter({
      name: `${p}commit_attempts_total`,
      help: 'Snapshot attempts of the commits, by outcome: created, already-exists (lost a race to another writer), error (outcome unknown).',
      labelNames: ['outcome'],
      registers,
    });
    this.retries = new Counter({ name: `${p}commit_retries_total`, help: 'Snapshot attempts after the first of a commit.', registers });
    this.lastCommitTimestamp = new Gauge({
      name: `${p}last_commit_timestamp_seconds`,
      help: 'When this process last committed a checkpoint (Unix time).',
      registers,
    });
    const age: Gauge = new Gauge({
      name: `${p}last_commit_age_seconds`,
      help: 'Seconds since this process last committed a checkpoint (since the pipeline started, before its first).',
      registers,
      collect: () => age.set(this.commitAgeSeconds()),
    });
    this.compactions = new Counter({
      name: `${p}compactions_total`,
      help: 'Bucket compactions the writers carried into checkpoints (primary-key tables).',
      registers,
    });
    this.compactionsDropped = new Counter({
      name: `${p}compactions_dropped_total`,
      help: 'Checkpoints whose compaction the commit dropped because a concurrent compaction replaced its inputs.',
      registers,
    });
    this.compactionFiles = new Counter({
      name: `${p}compaction_files_total`,
      help: "Files the writers' compactions replaced (side=before) and wrote (side=after).",
      labelNames: ['side'],
      registers,
    });
    this.compactionSeconds = new Histogram({
      name: `${p}compaction_duration_seconds`,
      help: 'Bucket compactions of the writers (primary-key tables), from start to result; they run while the writers write.',
      buckets: SECONDS,
      registers,
    });
    this.backlogErrors = new Counter({
      name: `${p}source_backlog_errors_total`,
      help: "Scrapes that could not read the source's backlog (the lag series are then absent).",
      registers,
    });
    this.backlogGauge(`${p}source_lag`, 'Source end minus committed position, per partition (messages for Kafka, bytes for files).', (b) =>
      Math.max(0, b.end - b.committed),
    );
    this.backlogGauge(`${p}source_end_offset`, 'End (high watermark) of each source partition.', (b) => b.end);
    this.backlogGauge(`${p}committed_offset`, 'Committed position in each source partition.', (b) => b.committed);
    const state: Gauge<'state'> = new Gauge({
      name: `${p}state`,
      help: `The pipeline's state (1 for the current one): ${STATES.join(', ')}.`,
      labelNames: ['state'],
      registers,
      collect: () => {
        for (const s of STATES) state.set({ state: s }, s === this.state ? 1 : 0);
      },
    });
  }

  /** A gauge per source partition, from the backlog read at scrape time. */
  private backlogGauge(name: string, help: string, value: (b: SourceBacklog) => number): void {
    const gauge: Gauge<'partition'> = new (prom().Gauge)({
      name,
      help,
      labelNames: ['partition'],
      registers: [this.registry],
      collect: async () => {
        const backlog = await this.backlog();
        gauge.reset();
        for (const b of backlog ?? []) gauge.set({ partition: b.partition }, value(b));
      },
    });
  }

  private backlog(): Promise<readonly SourceBacklog[] | null> {
    this.backlogScrape ??= this.readBacklog().finally(() => {
      this.backlogScrape = null;
    });
    return this.backlogScrape;
  }

  private async readBacklog(): Promise<readonly SourceBacklog[] | null> {
    const source = this.source;
    if (source?.backlog === undefined) return null;
    try {
      return await source.backlog(this.committed);
    } catch {
      this.backlogErrors.inc();
      return null;
    }
  }

  private commitAgeSeconds(): number {
    return (this.now() - (this.lastCommitAt ?? this.startedAt)) / 1000;
  }

  /** The pipeline's health (what `/healthz` and `/readyz` answer). */
  health(): IngestHealth {
    return {
      state: this.state,
      live: this.state !== 'failed',
      ready: this.state === 'running',
      commitUser: this.commitUser,
      lastCheckpointId: this.lastCheckpointId === null ? null : this.lastCheckpointId.toString(),
      lastCommitAgeSeconds: this.commitAgeSeconds(),
      ...(this.error !== undefined ? { error: this.error } : {}),
    };
  }

  resumed(info: IngestResumeInfo): void {
    this.source = info.source;
    this.committed = info.offset;
    this.commitUser = info.commitUser;
    // Again after a restart of the run (or a new run with the same metrics), unless it is stopping.
    if (this.state !== 'stopping') this.state = 'running';
    this.error = undefined;
  }

  recordRead(): void {
    this.records.inc();
  }

  checkpointCommitted(info: CheckpointInfo): void {
    const at = this.now();
    this.committed = info.offset;
    this.lastCheckpointId = info.checkpointId;
    this.lastCommitAt = at;
    this.lastCommitTimestamp.set(at / 1000);
    this.checkpoints.inc();
    this.checkpointSeconds.observe(info.durationMs / 1000);
    this.prepareSeconds.observe(info.prepareMs / 1000);
    const c = info.compaction;
    if (c.buckets > 0) this.compactions.inc(c.buckets);
    if (c.dropped) this.compactionsDropped.inc();
    if (c.filesBefore > 0) this.compactionFiles.inc({ side: 'before' }, c.filesBefore);
    if (c.filesAfter > 0) this.compactionFiles.inc({ side: 'after' }, c.filesAfter);
  }

  commitAttempt(attempt: CommitAttemptReport): void {
    this.attempts.inc({ outcome: attempt.outcome });
    if (attempt.retry > 0) this.retries.inc();
  }

  compacted(report: BucketCompactionReport): void {
    this.compactionSeconds.observe(report.durationMs / 1000);
  }

  stopping(): void {
    if (this.state === 'starting' || this.state === 'running') this.state = 'stopping';
  }

  ended(outcome: { readonly summary: IngestSummary } | { readonly error: unknown }): void {
    if ('summary' in outcome) {
      this.state = 'stopped';
      this.committed = outcome.summary.offset;
    } else {
      this.state = 'failed';
      this.error = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    }
  }
}
