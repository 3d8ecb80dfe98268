/**
 * Turns `tidemark write` input (JSON lines, CSV, Parquet) into rows for `TableWrite.write`.
 *
 * JSON lines use the value formats `tidemark read --format jsonl` prints, so a table can be
 * copied with `read | write`: BIGINT as a number or a string of digits, DECIMAL as a string (or a
 * number literal, taken exactly as written), DATE `YYYY-MM-DD`, TIME `HH:MM:SS[.f]`, TIMESTAMP
 * `YYYY-MM-DDTHH:MM:SS[.f]` (TIMESTAMP_LTZ with `Z` or an offset), BYTES base64, FLOAT/DOUBLE
 * numbers or `"NaN"`/`"Infinity"`/`"-Infinity"`, ARRAY/ROW as arrays/objects, MAP as an object
 * (string keys are parsed as the key type) or an array of `[key, value]` pairs.
 *
 * CSV has a header line of column names; an empty unquoted field is NULL and a quoted empty field
 * (`""`) is the empty string, as `read --format csv` writes them; nested values are JSON text.
 */
import type { Readable } from 'node:stream';
import type { DataField, DataType } from '@tidemark/format';
import { CliError } from '../errors.js';
import { NumberText, parseJsonText, type ParsedJson } from './json-text.js';

/** Input that cannot be turned into rows; names the line. */
export class InputError extends CliError {}

/** A chunk of rows and the 1-based input line of each (for error messages). */
export interface RowChunk {
  readonly rows: Record<string, unknown>[];
  readonly lines: number[];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function base64(text: string, where: string): Uint8Array {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact))
    throw new InputError(`${where}: expected base64 bytes, got ${JSON.stringify(text.length > 40 ? text.slice(0, 40) + '…' : text)}`);
  return new Uint8Array(Buffer.from(compact, 'base64'));
}

function numberFor(type: DataType, n: NumberText): unknown {
  switch (type.root) {
    case 'BIGINT':
      return /^-?\d+$/.test(n.text) ? BigInt(n.text) : n.text;
    case 'FLOAT':
    case 'DOUBLE':
    case 'DECIMAL':
      // Exact: the writer parses the literal text with the column's type.
      return n.text;
    default:
      return Number(n.text);
  }
}

/**
 * Converts a parsed JSON value to the form `TableWrite` accepts for `type` (base64 → bytes,
 * number literals exact, ROW objects checked for unknown fields).
 */
export function jsonToValue(type: DataType, v: ParsedJson, where: string): unknown {
  if (v === null) return null;
  if (v instanceof NumberText) return numberFor(type, v);
  switch (type.root) {
    case 'BINARY':
    case 'VARBINARY':
      return typeof v === 'string' ? base64(v, where) : plain(v);
    case 'ARRAY':
      return Array.isArray(v) ? v.map((e, i) => jsonToValue(type.element, e, `${where}[${i}]`)) : plain(v);
    case 'MULTISET':
      if (Array.isArray(v)) return v.map((e, i) => jsonToValue(type.element, e, `${where}[${i}]`));
      if (v instanceof Map)
        return new Map(
          [...v].map(([k, c]) => [
            jsonToValue(type.element, k, `${where}.${k}`),
            jsonToValue({ root: 'INT', nullable: false }, c, `${where}.${k}`),
          ]),
        );
      return plain(v);
    case 'MAP':
      if (v instanceof Map)
        return new Map(
          [...v].map(([k, x]) => [
            jsonToValue(type.key, k, `${where} key ${JSON.stringify(k)}`),
            jsonToValue(type.value, x, `${where}.${k}`),
          ]),
        );
      if (Array.isArray(v)) {
        return v.map((pair, i) => {
          if (!Array.isArray(pair) || pair.length !== 2) throw new InputError(`${where}[${i}]: expected a [key, value] pair`);
          return [jsonToValue(type.key, pair[0]!, `${where}[${i}] key`), jsonToValue(type.value, pair[1]!, `${where}[${i}] value`)];
        });
      }
      return plain(v);
    case 'ROW':
      if (v instanceof Map) {
        for (const k of v.keys()) {
          if (!type.fields.some((f) => f.name === k))
            throw new InputError(`${where}: unknown field '${k}' (fields: ${type.fields.map((f) => f.name).join(', ')})`);
        }
        return type.fields.map((f) => jsonToValue(f.type, v.get(f.name) ?? null, `${where}.${f.name}`));
      }
      if (Array.isArray(v))
        return v.map((e, i) => (type.fields[i] ? jsonToValue(type.fields[i].type, e, `${where}.${type.fields[i].name}`) : plain(e)));
      return plain(v);
    default:
      return plain(v);
  }
}

/** A parsed value as plain JS, for the writer's own type error message. */
function plain(v: ParsedJson): unknown {
  if (v instanceof NumberText) return Number(v.text);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  return v;
}

/**
 * Reads the lines of `input` (LF or CRLF), yielding each with its 1-based number. Bytes that are
 * not UTF-8 are refused rather than read as U+FFFD, and a UTF-8 byte order mark is skipped.
 */
async function* lines(input: Readable): AsyncGenerator<[string, number]> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let n = 0;
  let carry: Buffer = Buffer.alloc(0);
  const decode = (bytes: Buffer): string => {
    let bytesOfLine = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes;
    if (n === 1 && bytesOfLine[0] === 0xef && bytesOfLine[1] === 0xbb && bytesOfLine[2] === 0xbf) bytesOfLine = bytesOfLine.subarray(3);
    try {
      return decoder.decode(bytesOfLine);
    } catch {
      throw new InputError(
        `input line ${n}: not valid UTF-8 (byte ${firstInvalidUtf8(bytesOfLine) + 1} of the line); convert the file to UTF-8`,
      );
    }
  };
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (carry.length > 0) buf = Buffer.concat([carry, buf]);
    let start = 0;
    let i: number;
    while ((i = buf.indexOf(10, start)) >= 0) {
      n++;
      yield [decode(buf.subarray(start, i)), n];
      start = i + 1;
    }
    carry = Buffer.from(buf.subarray(start));
  }
  if (carry.length > 0) {
    n++;
    yield [decode(carry), n];
  }
}

/** Index of the first byte of `bytes` that does not start a well-formed UTF-8 sequence (for messages). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  // The longest valid prefix, by bisection: a prefix is valid iff it decodes (cut sequences at its end aside).
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    let ok = true;
    try {
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, mid), { stream: true });
    } catch {
      ok = false;
    }
    if (ok) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Groups rows, each with its input line, into chunks of at most `chunkRows` rows. */
async function* inChunks(rows: AsyncIterable<[Record<string, unknown>, number]>, chunkRows: number): AsyncGenerator<RowChunk> {
  let chunk: RowChunk = { rows: [], lines: [] };
  for await (const [row, line] of rows) {
    chunk.rows.push(row);
    chunk.lines.push(line);
    if (chunk.rows.length >= chunkRows) {
      yield chunk;
      chunk = { rows: [], lines: [] };
    }
  }
  if (chunk.rows.length > 0) yield chunk;
}

/** JSON lines → chunks of rows (blank lines are skipped). */
export function readJsonLines(input: Readable, fields: readonly DataField[], chunkRows = 10_000): AsyncGenerator<RowChunk> {
  return inChunks(jsonLineRows(input, fields), chunkRows);
}

async function* jsonLineRows(input: Readable, fields: readonly DataField[]): AsyncGenerator<[Record<string, unknown>, number]> {
  const byName = new Map(fields.map((f) => [f.name, f]));
  for await (const [line, n] of lines(input)) {
    if (line.trim() === '') continue;
    const where = `input line ${n}`;
    const parsed = parseJsonText(line, where);
    if (!(parsed instanceof Map)) throw new InputError(`${where}: expected a JSON object {"column": value, ...}`);
    const row: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of parsed) {
      const f = byName.get(k);
      if (!f) throw new InputError(`${where}: unknown column '${k}' (table columns: ${fields.map((x) => x.name).join(', ')})`);
      row[k] = jsonToValue(f.type, v, `${where}, column '${k}'`);
    }
    yield [row, n];
  }
}

/** Splits CSV text into records of fields; `null` marks an empty unquoted field. */
async function* csvRecords(input: Readable): AsyncGenerator<[(string | null)[], number]> {
  let record: (string | null)[] = [];
  let field = '';
  let quoted = false;
  let inQuotes = false;
  let startLine = 1;
  let line = 1;
  let pendingQuote = false;
  let pendingCR = false;
  const endField = (): void => {
    record.push(quoted ? field : field === '' ? null : field);
    field = '';
    quoted = false;
  };
  // Not UTF-8 is refused rather than read as U+FFFD; the default ignoreBOM: false skips a BOM.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of input) {
    let text: string;
    try {
      text = typeof chunk === 'string' ? chunk : decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {
      const bytes = chunk as Uint8Array;
      const at = firstInvalidUtf8(bytes);
      let bad = line;
      for (let k = 0; k < at; k++) if (bytes[k] === 10) bad++;
      throw new InputError(`input line ${bad}: not valid UTF-8; convert the file to UTF-8`);
    }
    for (const c of text) {
      if (pendingQuote) {
        pendingQuote = false;
        if (c === '"') {
          field += '"';
          continue;
        }
        inQuotes = false;
      }
      if (inQuotes) {
        if (c === '"') pendingQuote = true;
        else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (pendingCR && c !== '\n') throw new InputError(`input line ${line}: stray carriage return outside quotes`);
      pendingCR = false;
      if (c === '"') {
        if (field !== '' || quoted) throw new InputError(`input line ${line}: a quote inside an unquoted field`);
        inQuotes = true;
        quoted = true;
      } else if (c === ',') endField();
      else if (c === '\r') pendingCR = true;
      else if (c === '\n') {
        endField();
        if (!(record.length === 1 && record[0] === null)) yield [record, startLine];
        record = [];
        line++;
        startLine = line;
      } else field += c;
    }
  }
  if (inQuotes && !pendingQuote) throw new InputError(`input line ${startLine}: unterminated quoted field`);
  if (field !== '' || quoted || record.length > 0) {
    endField();
    if (!(record.length === 1 && record[0] === null)) yield [record, startLine];
  }
}

const NESTED = new Set(['ARRAY', 'MAP', 'MULTISET', 'ROW']);

/** CSV with a header line → chunks of rows. */
export function readCsv(input: Readable, fields: readonly DataField[], chunkRows = 10_000): AsyncGenerator<RowChunk> {
  return inChunks(csvRows(input, fields), chunkRows);
}

async function* csvRows(input: Readable, fields: readonly DataField[]): AsyncGenerator<[Record<string, unknown>, number]> {
  const byName = new Map(fields.map((f) => [f.name, f]));
  let header: DataField[] | undefined;
  for await (const [record, n] of csvRecords(input)) {
    if (!header) {
      const seen = new Set<string>();
      header = record.map((name) => {
        const f = name === null ? undefined : byName.get(name);
        if (!f)
          throw new InputError(
            `input line ${n}: header names unknown column '${name ?? ''}' (table columns: ${fields.map((x) => x.name).join(', ')})`,
          );
        if (seen.has(f.name)) throw new InputError(`input line ${n}: header names column '${f.name}' twice`);
        seen.add(f.name);
        return f;
      });
      continue;
    }
    if (record.length !== header.length)
      throw new InputError(`input line ${n}: ${record.length} fields, but the header has ${header.length}`);
    const row: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    header.forEach((f, k) => {
      const text = record[k] ?? null;
      const where = `input line ${n}, column '${f.name}'`;
      if (text === null) row[f.name] = null;
      else if (NESTED.has(f.type.root)) row[f.name] = jsonToValue(f.type, parseJsonText(text, where), where);
      else if (f.type.root === 'BINARY' || f.type.root === 'VARBINARY') row[f.name] = jsonToValue(f.type, text, where);
      else row[f.name] = text;
    });
    yield [row, n];
  }
}
