/**
 * Change events of CDC tools, as Paimon's Flink CDC actions read them (`debezium-json`,
 * `canal-json`, `maxwell-json`), from a JSON-lines file, turned into records with a row kind:
 * - debezium-json: `op` c / r → `+I` (after), u → `-U` (before, when present) and `+U` (after),
 *   d → `-D` (before); the `{"schema", "payload"}` envelope is unwrapped; a `null` line (tombstone)
 *   is skipped;
 * - canal-json: `type` INSERT / UPDATE / DELETE over the rows of `data`; an UPDATE's before image is
 *   each `data` row overlaid with its `old` entry (the changed columns' previous values);
 * - maxwell-json: `type` insert (and bootstrap-insert) / update / delete over `data`, with `old` as
 *   in canal.
 * A schema-change event (Debezium `ddl` / `tableChanges`, canal `isDdl`, maxwell `table-*` /
 * `database-*`) stops the ingestion with a {@link CdcSchemaChangeError} naming it and its line.
 *
 * Offsets: the record that ends an event has the byte offset after the event's line; a record
 * before it (the `-U` of an update) has `{ byte: <start of the line>, skip: <records to skip> }`,
 * so a checkpoint between the two halves of an update resumes with exactly the missing half.
 */
import { resolve as resolvePath } from 'node:path';
import type { SourceOffset } from './checkpoint-state.js';
import { SourceError } from './errors.js';
import { JsonLinesFileSource, type ReplayableSource, type SourceBacklog, type SourceOpenOptions, type SourceRecord } from './source.js';

/** The CDC formats, with the names Paimon's CDC actions use. */
export const CDC_FORMATS = ['debezium-json', 'canal-json', 'maxwell-json'] as const;
export type CdcFormat = (typeof CDC_FORMATS)[number];

/** Field of each produced record that holds its row kind (pass it as the ingest's `rowKindField`). */
export const CDC_ROW_KIND_FIELD = '__tidemark_row_kind';

/** A change event that is not a row change of the formats above, or is malformed. */
export class CdcEventError extends SourceError {}

/** A schema-change (DDL) event: apply the change to the table, then resume after this line. */
export class CdcSchemaChangeError extends CdcEventError {}

type Row = Record<string, unknown>;

/** One row change: the row's columns and its kind. */
export interface CdcChange {
  readonly kind: '+I' | '-U' | '+U' | '-D';
  readonly row: Row;
}

function schemaChange(where: string, what: string): CdcSchemaChangeError {
  return new CdcSchemaChangeError(
    `${where}: ${what}; the ingestion stops before it: ` +
      'apply the change to the table (tidemark alter), remove this event from the source and rerun',
  );
}

function isObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function rowOf(v: unknown, what: string, where: string): Row {
  if (!isObject(v)) throw new CdcEventError(`${where}: ${what} must be a JSON object`);
  return v;
}

/**
 * The row changes of one event (none for events that change no rows, such as tombstones).
 *
 * @throws CdcSchemaChangeError for a schema-change event.
 * @throws CdcEventError for an event that is not a valid row change of `format`.
 */
export function cdcChanges(format: CdcFormat, event: unknown, where: string): CdcChange[] {
  if (event === null) {
    if (format === 'debezium-json') return [];
    throw new CdcEventError(`${where}: a null event is not a ${format} event`);
  }
  if (!isObject(event)) throw new CdcEventError(`${where}: expected a JSON object per line`);
  switch (format) {
    case 'debezium-json':
      return debezium(event, where);
    case 'canal-json':
      return canal(event, where);
    case 'maxwell-json':
      return maxwell(event, where);
  }
}

function debezium(event: Row, where: string): CdcChange[] {
  // With schemas enabled the event is {"schema": …, "payload": {…}}.
  const p = isObject(event['payload']) && 'schema' in event ? (event['payload'] as Row) : event;
  const op = p['op'];
  if (op === undefined || op === null) {
    if ('ddl' in p || 'tableChanges' in p || 'historyRecord' in p) {
      const ddl = typeof p['ddl'] === 'string' ? `: ${p['ddl']}` : '';
      throw schemaChange(where, `debezium-json schema-change event${ddl}`);
    }
    throw new CdcEventError(`${where}: debezium-json event has no 'op'`);
  }
  switch (op) {
    case 'c':
    case 'r':
      return [{ kind: '+I', row: rowOf(p['after'], "'after'", where) }];
    case 'u': {
      const out: CdcChange[] = [];
      if (p['before'] !== null && p['before'] !== undefined) out.push({ kind: '-U', row: rowOf(p['before'], "'before'", where) });
      out.push({ kind: '+U', row: rowOf(p['after'], "'after'", where) });
      return out;
    }
    case 'd':
      return [{ kind: '-D', row: rowOf(p['before'], "'before'", where) }];
    default:
      throw new CdcEventError(`${where}: debezium-json op '${String(op)}' is not a row change (expected c, r, u or d)`);
  }
}

/** Rows of `data` with their before images (`old` overlaid) for updates. */
function withOld(format: string, event: Row, where: string, many: boolean): Array<{ after: Row; before: Row }> {
  const data = event['data'];
  const old = event['old'];
  const rows = many ? data : [data];
  const olds = many ? old : [old];
  if (!Array.isArray(rows)) throw new CdcEventError(`${where}: ${format} event has no 'data' ${many ? 'array' : 'object'}`);
  return rows.map((r, i) => {
    const after = rowOf(r, `'data'${many ? `[${i}]` : ''}`, where);
    const o = Array.isArray(olds) ? olds[i] : undefined;
    return { after, before: o === undefined || o === null ? after : { ...after, ...rowOf(o, `'old'${many ? `[${i}]` : ''}`, where) } };
  });
}

function canal(event: Row, where: string): CdcChange[] {
  const type = event['type'];
  if (event['isDdl'] === true) {
    const sql = typeof event['sql'] === 'string' && event['sql'] !== '' ? `: ${event['sql']}` : '';
    throw schemaChange(where, `canal-json schema-change event (type ${String(type)})${sql}`);
  }
  switch (type) {
    case 'INSERT':
      return withOld('canal-json', event, where, true).map((r) => ({ kind: '+I', row: r.after }));
    case 'UPDATE':
      return withOld('canal-json', event, where, true).flatMap((r): CdcChange[] => [
        { kind: '-U', row: r.before },
        { kind: '+U', row: r.after },
      ]);
    case 'DELETE':
      return withOld('canal-json', event, where, true).map((r) => ({ kind: '-D', row: r.after }));
    default:
      if (typeof type === 'string' && /^(CREATE|ALTER|ERASE|RENAME|TRUNCATE|CINDEX|DINDEX|QUERY)$/.test(type)) {
        throw schemaChange(where, `canal-json schema-change event (type ${type})`);
      }
      throw new CdcEventError(`${where}: canal-json type '${String(type)}' is not a row change (expected INSERT, UPDATE or DELETE)`);
  }
}

function maxwell(event: Row, where: string): CdcChange[] {
  const type = event['type'];
  switch (type) {
    case 'insert':
    case 'bootstrap-insert':
      return withOld('maxwell-json', event, where, false).map((r) => ({ kind: '+I', row: r.after }));
    case 'update':
      return withOld('maxwell-json', event, where, false).flatMap((r): CdcChange[] => [
        { kind: '-U', row: r.before },
        { kind: '+U', row: r.after },
      ]);
    case 'delete':
      return withOld('maxwell-json', event, where, false).map((r) => ({ kind: '-D', row: r.after }));
    case 'bootstrap-start':
    case 'bootstrap-complete':
      return [];
    default:
      if (typeof type === 'string' && /^(table|database)-/.test(type)) {
        const sql = typeof event['sql'] === 'string' ? `: ${event['sql']}` : '';
        throw schemaChange(where, `maxwell-json schema-change event (type ${type})${sql}`);
      }
      throw new CdcEventError(`${where}: maxwell-json type '${String(type)}' is not a row change (expected insert, update or delete)`);
  }
}

/** A JSON-lines file of CDC events, replayable like {@link JsonLinesFileSource}. */
export class CdcJsonLinesSource implements ReplayableSource<Record<string, unknown>> {
  readonly bounded = true;
  readonly id: string;
  private readonly lines: JsonLinesFileSource;

  constructor(
    readonly path: string,
    readonly format: CdcFormat,
  ) {
    if (!(CDC_FORMATS as readonly string[]).includes(format)) {
      throw new SourceError(`unknown CDC format '${String(format)}'; use ${CDC_FORMATS.join(', ')}`);
    }
    this.lines = new JsonLinesFileSource(path, { allowNull: true });
    this.id = `${format}:${resolvePath(path)}`;
  }

  async *open(from: SourceOffset, options: SourceOpenOptions = {}): AsyncIterable<SourceRecord<Record<string, unknown>>> {
    const { byte: start, skip: first } = this.position(from);
    let skip = first;
    let eventStart = start ?? 0;
    for await (const rec of this.lines.open(start, options)) {
      const where = rec.position ?? this.path;
      const changes = cdcChanges(this.format, rec.value, where);
      for (let i = skip; i < changes.length; i++) {
        const c = changes[i]!;
        const offset: SourceOffset = i === changes.length - 1 ? rec.offset : { byte: eventStart, skip: i + 1 };
        yield { value: { ...c.row, [CDC_ROW_KIND_FIELD]: c.kind }, offset, position: where };
      }
      skip = 0;
      eventStart = rec.offset as number;
    }
  }

  /** The file's backlog in bytes: an offset inside an event counts from the event's line. */
  async backlog(committed: SourceOffset): Promise<readonly SourceBacklog[]> {
    return this.lines.backlog(this.position(committed).byte);
  }

  /** The line an offset of this source starts at (null: the start) and the records of its event to skip. */
  private position(from: SourceOffset): { byte: number | null; skip: number } {
    if (!isObject(from)) return { byte: from as number | null, skip: 0 };
    const byte = from['byte'];
    const n = from['skip'];
    if (typeof byte !== 'number' || typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      throw new SourceError(`offset ${JSON.stringify(from)} is not an offset of ${this.format} source ${this.path}`);
    }
    return { byte, skip: n };
  }
}
