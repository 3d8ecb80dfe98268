/**
 * `tidemark ingest` run as a service: its log lines (text or `--log-format json`), the metrics
 * and health endpoints (`--metrics-port`), and the bounded stop on SIGTERM / SIGINT
 * (`--stop-timeout`): the current checkpoint is finished, or abandoned when the stop takes too
 * long, and the command ends with exit code 0 either way.
 */
import {
  IngestMetrics,
  combineObservers,
  startMetricsServer,
  type CheckpointInfo,
  type IngestObserver,
  type IngestOptions,
  type IngestSummary,
  type MetricsServer,
} from '@tidemark/sink';
import type { CommandContext } from '../context.js';
import { InterruptedError } from '../errors.js';
import { commandLog, type CommandLog, type LogFormat } from '../output/log.js';

/** Default of `--stop-timeout`: inside Kubernetes' default grace period of 30 s. */
export const DEFAULT_STOP_TIMEOUT_MS = 25_000;

/** Settings of an {@link IngestService}. */
export interface IngestServiceOptions {
  readonly logFormat: LogFormat;
  /** Serve metrics and health on this port (0: any free port). */
  readonly metricsPort?: number;
  /** The longest the command takes to end after SIGTERM / SIGINT. */
  readonly stopTimeoutMs: number;
  /** Called before each log line (clears a progress line). */
  readonly beforeLine?: () => void;
}

/** What the service adds to the options of `runIngest`. */
export type IngestServiceHooks = Pick<IngestOptions, 'logger' | 'onCheckpoint' | 'observer' | 'signal' | 'stopTimeoutMs'>;

/** The log, metrics and stop of one `ingest` run; see the module comment. */
export class IngestService {
  private readonly onAbort = (): void => this.stopping();
  /** JSON format: Node's own warning printer, replaced while the command runs (see start). */
  private warningPrinters: Array<(warning: Error) => void> = [];
  private readonly onWarning = (warning: Error): void => this.line(() => this.log.warn(warning.message, { warning: warning.name }));

  private constructor(
    private readonly ctx: CommandContext,
    private readonly options: IngestServiceOptions,
    readonly log: CommandLog,
    private readonly metrics: IngestMetrics | undefined,
    private readonly server: MetricsServer | undefined,
  ) {
    ctx.signal.addEventListener('abort', this.onAbort, { once: true });
    if (log.format === 'json') {
      // Process warnings (the AWS SDK's about the Node version, deprecations) would otherwise be
      // printed as text between the JSON lines.
      this.warningPrinters = process.listeners('warning');
      process.removeAllListeners('warning');
      process.on('warning', this.onWarning);
    }
  }

  /** Starts the metrics server when asked for; call {@link close} when done. */
  static async start(ctx: CommandContext, options: IngestServiceOptions): Promise<IngestService> {
    const log = commandLog(ctx.stderr, options.logFormat, 'ingest', ctx.now);
    let metrics: IngestMetrics | undefined;
    let server: MetricsServer | undefined;
    if (options.metricsPort !== undefined) {
      metrics = new IngestMetrics({ processMetrics: true });
      server = await startMetricsServer(metrics, { port: options.metricsPort });
      log.info(
        'serving metrics',
        { url: `${server.url}/metrics`, health: `${server.url}/healthz`, ready: `${server.url}/readyz` },
        `tidemark: serving metrics at ${server.url}/metrics (health: /healthz, /readyz)`,
      );
    }
    return new IngestService(ctx, options, log, metrics, server);
  }

  /** Warnings as log lines (text or JSON), for the pipeline and its source. */
  readonly logger = { warn: (m: string): void => this.line(() => this.log.warn(m)) };

  /** The logger, checkpoint callback, observer and stop settings to give `runIngest`. */
  hooks(): IngestServiceHooks {
    const T = this.options.stopTimeoutMs;
    return {
      logger: this.logger,
      onCheckpoint: (info) => this.line(() => this.checkpointLine(info)),
      observer: this.observer(),
      signal: this.ctx.signal,
      // The pipeline abandons its checkpoint a little before the process must end (see run).
      stopTimeoutMs: T - Math.min(5_000, Math.floor(T / 5)),
    };
  }

  /**
   * Runs `ingest`. Once the stop signal aborts, it gets `stopTimeoutMs`: a run still busy then
   * (a storage request that does not answer) is left behind and null returned; the process ends
   * as after a crash, and the next run resumes from the last committed checkpoint.
   */
  async run(ingest: Promise<IngestSummary>): Promise<IngestSummary | null> {
    const settled = ingest.then(
      (summary) => ({ summary }),
      (error: unknown) => ({ error }),
    );
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      onAbort = () => {
        timer = setTimeout(() => resolve('timeout'), this.options.stopTimeoutMs);
        timer.unref();
      };
      if (this.ctx.signal.aborted) onAbort();
      else this.ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const r = await Promise.race([settled, timedOut]);
      if (r === 'timeout') {
        this.line(() =>
          this.log.warn(
            `the stop took longer than --stop-timeout (${this.options.stopTimeoutMs} ms): exiting with a checkpoint in progress; the next run resumes from the last committed checkpoint`,
            { stopTimeoutMs: this.options.stopTimeoutMs },
          ),
        );
        return null;
      }
      if ('error' in r) throw r.error;
      return r.summary;
    } finally {
      clearTimeout(timer);
      this.ctx.signal.removeEventListener('abort', onAbort!);
    }
  }

  /** Stops the metrics server and the signal listener. */
  async close(): Promise<void> {
    this.ctx.signal.removeEventListener('abort', this.onAbort);
    if (this.log.format === 'json') {
      process.off('warning', this.onWarning);
      for (const printer of this.warningPrinters) process.on('warning', printer);
    }
    await this.server?.close();
  }

  private line(write: () => void): void {
    this.options.beforeLine?.();
    write();
  }

  private stopping(): void {
    const reason: unknown = this.ctx.signal.reason;
    const signal = reason instanceof InterruptedError ? reason.signal : 'abort';
    const seconds = this.options.stopTimeoutMs / 1000;
    this.line(() =>
      this.log.info(
        'stopping',
        { signal, stopTimeoutMs: this.options.stopTimeoutMs },
        `${signal === 'SIGINT' ? '\n' : ''}tidemark: ${signal}: finishing the current checkpoint, then exiting (at most ${seconds} s; send it again to exit at once)`,
      ),
    );
  }

  private checkpointLine(info: CheckpointInfo): void {
    // Re-sequenced files and dropped compactions cost a rewrite and a repeated compaction: shown
    // so that a pipeline (and the chaos harness) can tell how often they happen.
    const committed = info.commits
      .map((c) => {
        if (c.result.status !== 'committed') return c.result.status;
        const reseq = c.result.resequencedFiles ?? 0;
        return `snapshot ${c.result.snapshotId}${reseq > 0 ? ` (${reseq} files re-sequenced)` : ''}${
          c.result.compactionDropped !== undefined ? ' (compaction dropped)' : ''
        }`;
      })
      .join(', ');
    const snapshots = info.commits.flatMap((c) => (c.result.status === 'committed' ? c.result.snapshotIds : []));
    const resequencedFiles = info.commits.reduce((n, c) => n + (c.result.status === 'committed' ? (c.result.resequencedFiles ?? 0) : 0), 0);
    this.log.info(
      'checkpoint committed',
      {
        checkpointId: info.checkpointId,
        records: info.records,
        offset: info.offset,
        snapshots,
        durationMs: info.durationMs,
        prepareMs: info.prepareMs,
        compactedBuckets: info.compaction.buckets,
        compactionDropped: info.compaction.dropped,
        resequencedFiles,
      },
      `checkpoint ${info.checkpointId}: ${info.records} records, ${committed || 'nothing to commit'} (${info.durationMs} ms)`,
    );
  }

  /** The metrics (when served), and the restore logged. */
  private observer(): IngestObserver {
    return combineObservers(this.metrics, {
      resumed: (info) =>
        this.line(() =>
          this.log.info(
            'reading',
            {
              source: info.source.id,
              commitUser: info.commitUser,
              offset: info.offset,
              restoredFrom: info.restoredFrom,
              recoveredCheckpoints: info.recoveredCheckpoints,
            },
            null,
          ),
        ),
    });
  }
}
