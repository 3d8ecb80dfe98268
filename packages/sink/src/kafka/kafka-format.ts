/**
 * Kafka messages into records, per format (the names Paimon's Kafka actions use):
 * - `json`: the value is the row. On a primary-key table each message is an upsert (`+I`) and a
 *   tombstone (null value) deletes the row of its key (`-D` with the key's columns), as an
 *   upsert-kafka topic means it; on an append table a tombstone is skipped.
 * - `debezium-json`, `canal-json`, `maxwell-json`: the change events of those tools, decoded by
 *   the CDC decoders of the file sources ({@link cdcChanges}). A tombstone (Debezium writes one
 *   after each delete, for log compaction) changes no row and is skipped. A Debezium delete or
 *   update without a `before` image (PostgreSQL without REPLICA IDENTITY FULL) takes the key
 *   columns from the message key.
 * Message keys are JSON: an object of key columns (Debezium's `{"schema", "payload"}` envelope is
 * unwrapped), or a bare value when the table has a single key column.
 */
import { CDC_FORMATS, CDC_ROW_KIND_FIELD, cdcChanges, CdcEventError, type CdcChange, type CdcFormat } from '../cdc-source.js';
import { SourceError } from '../errors.js';

/** Formats of Kafka message values. */
export const KAFKA_FORMATS = ['json', ...CDC_FORMATS] as const;
export type KafkaFormat = (typeof KAFKA_FORMATS)[number];

type Row = Record<string, unknown>;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Buffer, what: string, where: string): unknown {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new SourceError(`${where}: the message ${what} is not valid UTF-8`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SourceError(`${where}: the message ${what} is not valid JSON (${(e as Error).message})`);
  }
}

function isObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The key columns a message key names. */
function keyRow(key: Buffer | null, primaryKeys: readonly string[], where: string): Row {
  if (key === null) throw new SourceError(`${where}: the message has no key, which this event needs for its row's primary key`);
  let v = parseJson(key, 'key', where);
  if (isObject(v) && isObject(v['payload']) && 'schema' in v) v = v['payload'];
  if (isObject(v)) {
    const missing = primaryKeys.filter((k) => !(k in v));
    if (missing.length > 0) throw new SourceError(`${where}: the message key has no primary-key field ${missing.join(', ')}`);
    return v;
  }
  if (primaryKeys.length === 1) return { [primaryKeys[0]!]: v };
  throw new SourceError(`${where}: the message key must be a JSON object of the primary-key fields ${primaryKeys.join(', ')}`);
}

/** Turns one message into records; a function per (format, table) so the hot path branches once. */
export type MessageDecoder = (key: Buffer | null, value: Buffer | null, where: string) => Row[];

/**
 * The decoder of `format` for a table with `primaryKeys` (empty for an append table). Records of a
 * primary-key table carry their row kind in {@link CDC_ROW_KIND_FIELD}.
 */
export function messageDecoder(format: KafkaFormat, primaryKeys: readonly string[]): MessageDecoder {
  const pk = primaryKeys.length > 0;
  if (format === 'json') {
    return (key, value, where) => {
      if (value === null) return pk ? [{ ...keyRow(key, primaryKeys, where), [CDC_ROW_KIND_FIELD]: '-D' }] : [];
      const v = parseJson(value, 'value', where);
      if (!isObject(v)) throw new SourceError(`${where}: the message value must be a JSON object (a row)`);
      if (pk) v[CDC_ROW_KIND_FIELD] = '+I';
      return [v];
    };
  }
  if (!pk) {
    throw new SourceError(`format ${format} needs a primary-key table (its updates and deletes address rows by key)`);
  }
  const cdc: CdcFormat = format;
  return (key, value, where) => {
    if (value === null) return [];
    let changes: CdcChange[];
    const event = parseJson(value, 'value', where);
    try {
      changes = cdcChanges(cdc, event, where);
    } catch (e) {
      // A Debezium delete without a before image: its key says which row.
      if (cdc === 'debezium-json' && e instanceof CdcEventError && isObject(event) && deleteWithoutBefore(event)) {
        changes = [{ kind: '-D', row: keyRow(key, primaryKeys, where) }];
      } else {
        throw e;
      }
    }
    return changes.map((c) => ({ ...c.row, [CDC_ROW_KIND_FIELD]: c.kind }));
  };
}

function deleteWithoutBefore(event: Row): boolean {
  const p = isObject(event['payload']) && 'schema' in event ? event['payload'] : event;
  return p['op'] === 'd' && (p['before'] === null || p['before'] === undefined);
}
