import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { ProgressReporter } from '../output/progress.js';
import {
  CDC_FORMATS,
  CDC_ROW_KIND_FIELD,
  CdcJsonLinesSource,
  JsonLinesFileSource,
  type CdcFormat,
  crashHookFromEnv,
  openCheckpointStore,
  runIngest,
  type CheckpointStateStore,
  type IngestSummary,
  type ReplayableSource,
  type SourceOffset,
  type SourceOpenOptions,
  type SourceRecord,
} from '@tidemark/sink';
import { defineCommand, ExitCode } from '../command.js';
import { UsageError } from '../errors.js';
import { parseDuration } from '../options/duration.js';
import { KAFKA_ONLY_OPTIONS, kafkaIngestOptions, kafkaSourceFromArgs } from './ingest-kafka.js';
import { commandLog, LOG_FORMATS, type LogFields, type LogFormat } from '../output/log.js';
import { DEFAULT_STOP_TIMEOUT_MS, IngestService, type IngestServiceOptions } from './ingest-service.js';
import {
  branchOption,
  printLine,
  progressFor,
  quietOption,
  tableArgument,
  tableLocation,
  withNeighboursNamed,
  withTable,
} from './shared.js';

/** `tidemark ingest`: exactly-once ingestion of a JSON-lines file, a CDC file or Kafka topics. */
export const ingestCommand = defineCommand({
  name: 'ingest',
  summary: 'ingest a JSON-lines file or Kafka topics exactly once, resumable after a crash',
  usage: {
    synopsis: [
      'ingest <table> --source <file.jsonl> --state <dir-or-uri> [--checkpoint-every N] [--parallelism P] [--row-kind-field F]',
      'ingest <table> --source <file.jsonl> --commit-user U [--start-fresh] [--checkpoint-every N] [--parallelism P] [--row-kind-field F]',
      'ingest <table> --source <file> --format debezium-json|canal-json|maxwell-json (--state <dir-or-uri> | --commit-user U) [...]',
      'ingest <table> --source kafka://<host:port>[,...]/<topic>[,...] --format json|debezium-json|canal-json|maxwell-json (--state <dir-or-uri> | --commit-user U) [--group-id G] [--start earliest|latest|group|<time>] [--partitions p,q | --split i/N] [--until-end] [--checkpoint-interval 10s] [...]',
    ],
    description:
      'Safe to kill at any moment; rerun with the same arguments until it reports the source done. ' +
      'With --commit-user instead of --state, no state is kept outside the table: the source offset travels in the snapshot properties. ' +
      'On a primary-key table records are upserts; with --row-kind-field F, field F of each record holds its kind ' +
      '(+I, -U, +U or -D) and is not a column. With --format debezium-json, canal-json or maxwell-json (the names of ' +
      "Paimon's CDC actions) each line is a change event of that CDC tool, turned into row kinds (inserts +I, updates " +
      '-U before and +U after, deletes -D); a schema-change event stops the ingestion with an error naming its line. ' +
      'With --source kafka://..., the topics are read by explicit partition assignment (all partitions, or --partitions / --split for ' +
      'several processes sharing a topic, each with its own --state) and followed until stopped (Ctrl-C or SIGTERM), or read to the end ' +
      'they had at start with --until-end; the offsets live in the checkpoint, and after each commit they are reported to a consumer ' +
      'group for lag monitoring only. Client settings: the --kafka-* flags or TIDEMARK_KAFKA_* variables. ' +
      'Prints one JSON summary line when done. ' +
      'As a service: SIGTERM or SIGINT finishes the current checkpoint (or abandons it when the stop takes longer than ' +
      '--stop-timeout) and exits 0; the next run resumes exactly. --metrics-port serves Prometheus metrics and health ' +
      'endpoints; --log-format json writes one JSON object per log line.',
    positionals: [tableArgument],
    options: {
      source: { type: 'string', valueName: 'file-or-uri', description: 'JSON-lines or CDC file, or kafka://<brokers>/<topics>' },
      state: { type: 'string', valueName: 'dir-or-uri', description: 'where checkpoints are kept' },
      'checkpoint-every': { type: 'integer', min: 1, valueName: 'N', description: 'records per checkpoint' },
      'checkpoint-interval': {
        type: 'string',
        valueName: 'dur',
        description: 'also checkpoint this long after the last one (e.g. 10s; an idle Kafka topic included)',
      },
      parallelism: { type: 'integer', min: 1, valueName: 'P', description: 'parallel writers' },
      'commit-user': {
        type: 'string',
        valueName: 'U',
        description: 'self-contained mode: stable commit user of this pipeline (instead of --state)',
      },
      'start-fresh': { type: 'boolean', description: 'self-contained mode: start although early snapshots expired' },
      'row-kind-field': {
        type: 'string',
        valueName: 'F',
        description: 'primary-key tables: record field holding each row kind (+I, -U, +U, -D)',
      },
      format: {
        type: 'string',
        valueName: 'fmt',
        choices: ['jsonl', 'json', ...CDC_FORMATS],
        description: 'source format (default jsonl: one row per line; json for Kafka is the same)',
      },
      ...kafkaIngestOptions,
      quiet: quietOption,
      branch: branchOption,
      'metrics-port': {
        type: 'integer',
        min: 0,
        valueName: 'P',
        description: 'serve Prometheus metrics on port P (/metrics, health: /healthz, /readyz)',
      },
      'log-format': { type: 'string', valueName: 'fmt', choices: LOG_FORMATS, description: 'log lines on stderr (default text)' },
      'stop-timeout': {
        type: 'string',
        valueName: 'duration',
        description: `longest time from SIGTERM/SIGINT to exit (default ${DEFAULT_STOP_TIMEOUT_MS / 1000}s)`,
      },
    },
    conflicts: [['format', 'row-kind-field']],
  },
  stopsGracefully: true,
  async run(args, ctx) {
    const [tableArg] = args.positionals;
    if (tableArg === undefined) throw new UsageError('missing <table>', 'ingest');
    if (args.options.source === undefined) throw new UsageError("option '--source' is required", 'ingest');
    const commitUser = args.options['commit-user'];
    if (args.options.state === undefined && commitUser === undefined) throw new UsageError("option '--state' is required", 'ingest');
    if (args.options.state !== undefined && commitUser !== undefined) {
      throw new UsageError("give either '--state' or '--commit-user' (self-contained mode), not both", 'ingest');
    }
    if (args.options['start-fresh'] && commitUser === undefined)
      throw new UsageError("'--start-fresh' only applies with '--commit-user'", 'ingest');
    const serviceOptions = serviceSettings(args.options);
    const format = args.options.format ?? 'jsonl';
    const kafka = args.options.source.startsWith('kafka://');
    if (!kafka) {
      const given = KAFKA_ONLY_OPTIONS.find((k) => args.options[k] !== undefined && args.options[k] !== false);
      if (given !== undefined) throw new UsageError(`option '--${given}' applies to kafka:// sources only`, 'ingest');
    }
    if (kafka && args.options['row-kind-field'] !== undefined) {
      throw new UsageError(
        "'--row-kind-field' does not apply to Kafka: on a primary-key table a message is an upsert and a tombstone a delete",
        'ingest',
      );
    }
    const cdc = format === 'jsonl' || format === 'json' ? null : (format as CdcFormat);
    const interval = args.options['checkpoint-interval'];
    const checkpointIntervalMs = interval === undefined ? undefined : parseDuration(interval, 'checkpoint-interval');
    const crash = crashHookFromEnv(ctx.env);
    const sourcePath = kafka ? undefined : resolvePath(ctx.cwd, args.options.source);
    const sourceSize = sourcePath === undefined ? undefined : (await stat(sourcePath).catch(() => undefined))?.size;
    // JSON log lines are for collectors: no progress line between them.
    const quiet = args.options.quiet || serviceOptions.logFormat === 'json';
    const progress = progressFor(ctx, 'ingesting', 'records', undefined, sourceSize, { quiet, showRate: true });
    let service: IngestService | undefined;
    let store: CheckpointStateStore | undefined;
    let source: (ReplayableSource<Record<string, unknown>> & { close?: () => Promise<void> }) | undefined;
    try {
      // First: in JSON format it turns process warnings (the storage client's) into JSON lines.
      service = await IngestService.start(ctx, { ...serviceOptions, beforeLine: () => progress.finish() });
      if (args.options.state !== undefined) store = openCheckpointStore(tableLocation(args.options.state, ctx));
      const primaryKeys = await withTable({ table: tableArg, branch: args.options.branch }, ctx, async (t) => t.schema().primaryKeys);
      if (cdc !== null && primaryKeys.length === 0) {
        throw new UsageError(`--format ${cdc} needs a primary-key table (its updates and deletes address rows by key)`, 'ingest');
      }
      // Kafka records of a primary-key table carry their row kind (upserts, tombstone deletes), as CDC records do.
      const rowKindField = cdc !== null || (kafka && primaryKeys.length > 0) ? CDC_ROW_KIND_FIELD : args.options['row-kind-field'];
      source =
        sourcePath === undefined
          ? await kafkaSourceFromArgs(args.options.source, format, args.options, primaryKeys, ctx, service.logger)
          : cdc !== null
            ? new CdcJsonLinesSource(sourcePath, cdc)
            : new JsonLinesFileSource(sourcePath);
      const hooks = service.hooks();
      const summary = await service.run(
        runIngest({
          table: tableLocation(tableArg, ctx),
          ...(args.options.branch !== undefined ? { branch: args.options.branch } : {}),
          source: withProgress(source, progress),
          ...(store ? { stateStore: store } : { commitUser: commitUser!, startFresh: args.options['start-fresh'] === true }),
          checkpointEvery: args.options['checkpoint-every'] ?? 10_000,
          ...(checkpointIntervalMs !== undefined ? { checkpointIntervalMs } : {}),
          parallelism: args.options.parallelism ?? 1,
          ...(rowKindField !== undefined ? { rowKindField } : {}),
          crash,
          ...hooks,
        }),
      );
      progress.finish();
      const line = summaryJson(summary);
      service.log.info('ingest ended', line, null);
      await printLine(ctx, JSON.stringify(line));
    } catch (e) {
      const error = await withNeighboursNamed(e, tableLocation(tableArg, ctx));
      // Text: main prints the error. JSON: one error event, for the collector (also when the
      // service itself could not start, e.g. the metrics port is taken).
      const log = service?.log ?? commandLog(ctx.stderr, serviceOptions.logFormat, 'ingest', ctx.now);
      if (log.format !== 'json' || error instanceof UsageError) throw error;
      progress.finish();
      log.error(error instanceof Error ? error.message : String(error), {
        error: error instanceof Error ? error.name : typeof error,
      });
      return ExitCode.Failed;
    } finally {
      progress.finish();
      // The metrics server first: a scrape must not reach the source once it is closed.
      await closeAll([() => service?.close(), () => source?.close?.(), () => store?.close()]);
    }
  },
});

/**
 * Runs every closer, in order, even after one failed (a socket left open would keep the process
 * alive); rethrows the first failure.
 */
async function closeAll(closers: ReadonlyArray<() => Promise<void> | undefined>): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const close of closers) {
    try {
      await close();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/** `--log-format`, `--metrics-port` and `--stop-timeout`, checked. */
function serviceSettings(options: {
  readonly 'log-format'?: string;
  readonly 'metrics-port'?: number;
  readonly 'stop-timeout'?: string;
}): Omit<IngestServiceOptions, 'beforeLine'> {
  const port = options['metrics-port'];
  if (port !== undefined && port > 65_535)
    throw new UsageError(`option '--metrics-port' must be a TCP port (0 to 65535); got ${port}`, 'ingest');
  const timeout = options['stop-timeout'];
  return {
    logFormat: (options['log-format'] ?? 'text') as LogFormat,
    ...(port !== undefined ? { metricsPort: port } : {}),
    stopTimeoutMs: timeout === undefined ? DEFAULT_STOP_TIMEOUT_MS : parseDuration(timeout, '--stop-timeout'),
  };
}

/**
 * The summary printed on stdout. `null`: the stop outlasted `--stop-timeout` with a checkpoint in
 * progress (the next run resumes from the last committed one).
 */
function summaryJson(summary: IngestSummary | null): LogFields {
  if (summary === null) return { status: 'stopped', stopTimedOut: true };
  const id = (v: bigint | null): number | null => (v === null ? null : Number(v));
  return {
    status: summary.status,
    mode: summary.mode,
    commitUser: summary.commitUser,
    restoredFrom: id(summary.restoredFrom),
    recoveredCheckpoints: summary.recoveredCheckpoints,
    records: summary.records,
    checkpoints: summary.checkpoints,
    lastCheckpointId: id(summary.lastCheckpointId),
    ...(summary.abandonedCheckpoint !== null ? { abandonedCheckpoint: id(summary.abandonedCheckpoint) } : {}),
    offset: summary.offset,
    snapshotId: summary.snapshotId,
  };
}

/**
 * `source` with each record counted on `progress`; JSON-lines offsets are byte positions, so the
 * bytes read (and, against the file size, the ETA) come from them. A resumed run starts at its offset.
 */
function withProgress<T>(source: ReplayableSource<T>, progress: ProgressReporter): ReplayableSource<T> {
  return {
    id: source.id,
    bounded: source.bounded,
    async *open(from: SourceOffset, options?: SourceOpenOptions): AsyncIterable<SourceRecord<T>> {
      let position = typeof from === 'number' ? from : 0;
      progress.add(0, position);
      for await (const record of source.open(from, options)) {
        if (record.positionOnly === true) {
          yield record;
          continue;
        }
        const offset = record.offset;
        const bytes = typeof offset === 'number' && offset > position ? offset - position : 0;
        if (typeof offset === 'number') position = offset;
        progress.add(1, bytes);
        yield record;
      }
    },
    // A partitioned source's lag and committed-offset reports pass through unchanged.
    ...(source.backlog ? { backlog: source.backlog.bind(source) } : {}),
    ...(source.committed ? { committed: source.committed.bind(source) } : {}),
  };
}
