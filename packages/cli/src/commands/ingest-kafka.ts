/**
 * `tidemark ingest --source kafka://...`: the Kafka options of `ingest` and the {@link KafkaSource}
 * they describe. Client settings come from flags or from `TIDEMARK_KAFKA_*` variables (a flag
 * wins); secrets (the SASL password, a key's passphrase) only from a variable or a file, never
 * from a flag, and are never printed.
 */
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import {
  KAFKA_FORMATS,
  KafkaSource,
  SASL_MECHANISMS,
  parsePartitionList,
  parseSplit,
  type KafkaAssignment,
  type KafkaConnectionSettings,
  type KafkaFormat,
  type KafkaSaslMechanism,
  type KafkaStart,
  type KafkaTlsSettings,
} from '@tidemark/sink';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';

/** The options `ingest` declares for Kafka sources (all ignored by file sources, which refuse them). */
export const kafkaIngestOptions = {
  'group-id': {
    type: 'string',
    valueName: 'G',
    description: 'Kafka: consumer group the committed offsets are reported to (default tidemark-<table>-<commitUser>)',
  },
  start: {
    type: 'string',
    valueName: 'pos',
    description: "Kafka, first run: earliest (default), latest, group (the group's offsets), or a time (ISO-8601 or epoch ms)",
  },
  partitions: { type: 'string', valueName: 'p,q', description: 'Kafka: read only these partitions (of every topic)' },
  split: { type: 'string', valueName: 'i/N', description: 'Kafka: process i of N reads partitions p with p mod N = i' },
  'until-end': { type: 'boolean', description: 'Kafka: stop once every partition reached the end it had at start' },
  'kafka-client-id': { type: 'string', valueName: 'id', description: 'Kafka client id (default tidemark; env TIDEMARK_KAFKA_CLIENT_ID)' },
  'kafka-tls': { type: 'boolean', description: 'Kafka: connect with TLS (env TIDEMARK_KAFKA_TLS=true)' },
  'kafka-ca': { type: 'string', valueName: 'file', description: 'Kafka TLS: CA certificates, PEM (env TIDEMARK_KAFKA_CA)' },
  'kafka-cert': { type: 'string', valueName: 'file', description: 'Kafka TLS: client certificate, PEM (env TIDEMARK_KAFKA_CERT)' },
  'kafka-key': {
    type: 'string',
    valueName: 'file',
    description: 'Kafka TLS: client key, PEM (env TIDEMARK_KAFKA_KEY; passphrase in TIDEMARK_KAFKA_KEY_PASSPHRASE)',
  },
  'kafka-sasl': {
    type: 'string',
    valueName: 'mech',
    choices: SASL_MECHANISMS,
    description: 'Kafka SASL mechanism (env TIDEMARK_KAFKA_SASL_MECHANISM)',
  },
  'kafka-user': { type: 'string', valueName: 'U', description: 'Kafka SASL user (env TIDEMARK_KAFKA_USER)' },
  'kafka-password-file': {
    type: 'string',
    valueName: 'file',
    description: 'Kafka SASL password, read from a file (or env TIDEMARK_KAFKA_PASSWORD; never a flag)',
  },
} as const;

/** The parsed Kafka options (as the command's parser types them). */
export interface KafkaIngestArgs {
  readonly 'group-id'?: string | undefined;
  readonly start?: string | undefined;
  readonly partitions?: string | undefined;
  readonly split?: string | undefined;
  readonly 'until-end': boolean;
  readonly 'kafka-client-id'?: string | undefined;
  readonly 'kafka-tls': boolean;
  readonly 'kafka-ca'?: string | undefined;
  readonly 'kafka-cert'?: string | undefined;
  readonly 'kafka-key'?: string | undefined;
  readonly 'kafka-sasl'?: string | undefined;
  readonly 'kafka-user'?: string | undefined;
  readonly 'kafka-password-file'?: string | undefined;
}

/** The Kafka-only options, to refuse them with a file source. */
export const KAFKA_ONLY_OPTIONS = Object.keys(kafkaIngestOptions) as Array<keyof typeof kafkaIngestOptions>;

/** Brokers and topics of `kafka://host:port[,host:port...]/topic[,topic...]`. */
export function parseKafkaUri(uri: string): { brokers: string[]; topics: string[] } {
  const m = /^kafka:\/\/([^/]+)\/(.+)$/.exec(uri.trim());
  const usage = "expected kafka://<host:port>[,<host:port>...]/<topic>[,<topic>...], e.g. 'kafka://broker:9092/orders'";
  if (!m) throw new UsageError(`--source '${uri}': ${usage}`, 'ingest');
  const brokers = m[1]!.split(',').map((b) => b.trim());
  for (const b of brokers) {
    if (b.includes('@'))
      throw new UsageError(`--source: put no credentials in the URI; use --kafka-user and TIDEMARK_KAFKA_PASSWORD`, 'ingest');
    if (!/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+):\d{1,5}$/.test(b))
      throw new UsageError(`--source '${uri}': broker '${b}' is not host:port`, 'ingest');
  }
  const topics = m[2]!.split(',').map((t) => t.trim());
  for (const t of topics) {
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(t)) throw new UsageError(`--source '${uri}': '${t}' is not a Kafka topic name`, 'ingest');
  }
  return { brokers, topics };
}

async function pemFile(ctx: CommandContext, file: string | undefined, what: string): Promise<string | undefined> {
  if (file === undefined || file === '') return undefined;
  try {
    return await readFile(resolvePath(ctx.cwd, file), 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'ingest');
  }
}

/** Connection settings from the flags and `TIDEMARK_KAFKA_*` variables. */
export async function kafkaConnection(brokers: string[], o: KafkaIngestArgs, ctx: CommandContext): Promise<KafkaConnectionSettings> {
  const env = ctx.env;
  const clientId = o['kafka-client-id'] ?? env['TIDEMARK_KAFKA_CLIENT_ID'];
  const ca = await pemFile(ctx, o['kafka-ca'] ?? env['TIDEMARK_KAFKA_CA'], 'the Kafka CA file');
  const cert = await pemFile(ctx, o['kafka-cert'] ?? env['TIDEMARK_KAFKA_CERT'], 'the Kafka client certificate');
  const key = await pemFile(ctx, o['kafka-key'] ?? env['TIDEMARK_KAFKA_KEY'], 'the Kafka client key');
  const passphrase = env['TIDEMARK_KAFKA_KEY_PASSPHRASE'];
  const tlsFlag = o['kafka-tls'] || /^(1|true|yes)$/i.test(env['TIDEMARK_KAFKA_TLS'] ?? '');
  let ssl: boolean | KafkaTlsSettings | undefined;
  if (ca !== undefined || cert !== undefined || key !== undefined) {
    ssl = { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}), ...(passphrase ? { passphrase } : {}) };
  } else if (tlsFlag) {
    ssl = true;
  }
  const mechanism = o['kafka-sasl'] ?? env['TIDEMARK_KAFKA_SASL_MECHANISM'];
  const user = o['kafka-user'] ?? env['TIDEMARK_KAFKA_USER'];
  const passwordFile = o['kafka-password-file'] ?? env['TIDEMARK_KAFKA_PASSWORD_FILE'];
  let password = env['TIDEMARK_KAFKA_PASSWORD'];
  if (passwordFile !== undefined) password = (await pemFile(ctx, passwordFile, 'the Kafka password file'))?.replace(/\r?\n$/, '');
  let sasl: KafkaConnectionSettings['sasl'];
  if (mechanism !== undefined) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
      throw new UsageError(`TIDEMARK_KAFKA_SASL_MECHANISM '${mechanism}' is not one of ${SASL_MECHANISMS.join(', ')}`, 'ingest');
    }
    if (user === undefined || password === undefined) {
      throw new UsageError(
        `SASL ${mechanism} needs a user (--kafka-user or TIDEMARK_KAFKA_USER) and a password (TIDEMARK_KAFKA_PASSWORD or --kafka-password-file)`,
        'ingest',
      );
    }
    sasl = { mechanism: mechanism as KafkaSaslMechanism, username: user, password };
  } else if (user !== undefined || password !== undefined) {
    throw new UsageError(
      'a Kafka user or password was given without a SASL mechanism (--kafka-sasl or TIDEMARK_KAFKA_SASL_MECHANISM)',
      'ingest',
    );
  }
  return {
    brokers,
    ...(clientId ? { clientId } : {}),
    ...(ssl !== undefined ? { ssl } : {}),
    ...(sasl ? { sasl } : {}),
  };
}

function kafkaStart(text: string | undefined): KafkaStart {
  if (text === undefined || text === 'earliest') return 'earliest';
  if (text === 'latest' || text === 'group') return text;
  return { timestampMs: parseInstant(text, 'start') };
}

function assignmentOf(o: KafkaIngestArgs): KafkaAssignment | undefined {
  if (o.partitions !== undefined && o.split !== undefined)
    throw new UsageError("give either '--partitions' or '--split', not both", 'ingest');
  try {
    if (o.partitions !== undefined) return parsePartitionList(o.partitions);
    if (o.split !== undefined) return parseSplit(o.split);
  } catch (e) {
    throw new UsageError((e as Error).message, 'ingest');
  }
  return undefined;
}

/** The Kafka source of `ingest --source kafka://...`. */
export async function kafkaSourceFromArgs(
  uri: string,
  format: string,
  o: KafkaIngestArgs,
  primaryKeys: readonly string[],
  ctx: CommandContext,
  logger: { warn(message: string): void },
): Promise<KafkaSource> {
  const kafkaFormat = format === 'jsonl' ? 'json' : format;
  if (!(KAFKA_FORMATS as readonly string[]).includes(kafkaFormat)) {
    throw new UsageError(`--format ${format} does not apply to Kafka; use ${KAFKA_FORMATS.join(', ')}`, 'ingest');
  }
  const { brokers, topics } = parseKafkaUri(uri);
  const assignment = assignmentOf(o);
  const start = kafkaStart(o.start);
  if (start === 'group' && o['group-id'] === undefined) throw new UsageError("'--start group' needs '--group-id'", 'ingest');
  return new KafkaSource({
    connection: await kafkaConnection(brokers, o, ctx),
    topics,
    format: kafkaFormat as KafkaFormat,
    primaryKeys,
    ...(assignment ? { assignment } : {}),
    start,
    ...(o['group-id'] !== undefined ? { groupId: o['group-id'] } : {}),
    untilEnd: o['until-end'],
    // The command's log: text or JSON lines like every other warning, secrets masked.
    logger,
  });
}
