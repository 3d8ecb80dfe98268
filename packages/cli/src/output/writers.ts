/**
 * Row writers for `tidemark read`: stream Arrow RecordBatches to a Writable as JSON lines, CSV
 * or an aligned text table, honouring `--limit`, stream backpressure and an abort signal.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { Type } from 'apache-arrow';
import type { DataType as ArrowDataType, RecordBatch, Schema } from 'apache-arrow';
import { createRowFormatter, stringifyJson } from './value-format.js';
import type { JsonValue, PaimonTypeHint, RowFormatter } from './value-format.js';

/** The values `--format` accepts. */
export const OUTPUT_FORMATS = ['jsonl', 'csv', 'table'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Options of {@link writeRecordBatches}. */
export interface WriteRowsOptions {
  readonly format: OutputFormat;
  /** Stop after this many rows (the source iterator is closed early). */
  readonly limit?: number;
  /** Schema of the result, so csv/table can print a header even when there are no rows. */
  readonly schema?: Schema;
  /** Paimon type of each column in schema order; see {@link createRowFormatter}. */
  readonly columnTypes?: readonly (PaimonTypeHint | undefined)[];
  /** Stops writing (rejecting with the signal's reason) when aborted. */
  readonly signal?: AbortSignal;
  /** `table`: cells wider than this are cut with `…` (default 40). */
  readonly maxCellWidth?: number;
  /** `table`: how many rows are buffered to size the columns (default 100). */
  readonly tableSampleRows?: number;
  /** `csv`: record separator; RFC 4180 says CRLF, which is the default. */
  readonly csvLineEnding?: '\r\n' | '\n';
}

/** What was written. */
export interface WriteRowsResult {
  readonly rows: number;
}

/** Text is handed to the stream in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes every row of `batches` to `out` in `options.format`, waiting for `drain` whenever the
 * stream asks for it. Does not end `out`.
 */
export async function writeRecordBatches(
  batches: AsyncIterable<RecordBatch> | Iterable<RecordBatch>,
  out: Writable,
  options: WriteRowsOptions,
): Promise<WriteRowsResult> {
  const limit = options.limit ?? Infinity;
  const signal = options.signal;
  let sink: RowSink | undefined;
  let rows = 0;
  let pending = '';
  const flush = async (force: boolean): Promise<void> => {
    if (pending.length === 0 || (!force && pending.length < CHUNK_CHARS)) return;
    const text = pending;
    pending = '';
    await writeText(out, text, signal);
  };
  const open = (schema: Schema): RowSink => {
    sink = createSink(schema, options);
    pending += sink.begin();
    return sink;
  };

  if (limit > 0) {
    for await (const batch of batches) {
      signal?.throwIfAborted();
      const s = sink ?? open(batch.schema);
      const take = Math.min(batch.numRows, limit - rows);
      for (let r = 0; r < take; r++) {
        pending += s.row(batch, r);
        if (pending.length >= CHUNK_CHARS) await flush(true);
      }
      rows += take;
      await flush(false);
      if (rows >= limit) break;
    }
  }
  signal?.throwIfAborted();
  if (!sink && options.schema) open(options.schema);
  if (sink) pending += sink.end();
  await flush(true);
  return { rows };
}

/** Writes `text`, resolving once the stream can take more (backpressure) or rejecting on abort/error. */
export async function writeText(out: Writable, text: string, signal?: AbortSignal): Promise<void> {
  if (out.write(text)) return;
  await once(out, 'drain', signal ? { signal } : {});
}

/** Turns rows into text for one output format. */
interface RowSink {
  begin(): string;
  row(batch: RecordBatch, row: number): string;
  end(): string;
}

function createSink(schema: Schema, options: WriteRowsOptions): RowSink {
  const formatter = createRowFormatter(schema, options.columnTypes);
  switch (options.format) {
    case 'jsonl':
      return { begin: () => '', row: (b, r) => `${formatter.formatJsonLine(b, r)}\n`, end: () => '' };
    case 'csv':
      return csvSink(formatter, options.csvLineEnding ?? '\r\n');
    case 'table':
      return tableSink(schema, formatter, options.maxCellWidth ?? 40, options.tableSampleRows ?? 100);
  }
}

/** Quotes one CSV field per RFC 4180 when it holds a comma, quote, CR or LF (or is empty, to tell it from null). */
export function csvField(text: string): string {
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV cell: null as an empty field, strings as they are, nested values as JSON text. */
export function csvCell(value: JsonValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return csvField(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return csvField(stringifyJson(value));
}

function csvSink(formatter: RowFormatter, eol: string): RowSink {
  return {
    begin: () => formatter.columns.map(csvField).join(',') + eol,
    row: (b, r) => formatter.formatRow(b, r).map(csvCell).join(',') + eol,
    end: () => '',
  };
}

/**
 * Text of one table cell: NULL for a null, and a string that would read as NULL or vanish (`null`,
 * `NULL`, the empty string) in double quotes, so the two never look alike. Control characters are
 * made visible so a row stays on one line.
 */
export function tableCell(value: JsonValue): string {
  const text =
    value === null
      ? 'NULL'
      : typeof value === 'string'
        ? /^(null)?$/i.test(value)
          ? JSON.stringify(value)
          : value
        : typeof value === 'object'
          ? stringifyJson(value)
          : String(value);
  return text.replace(/[\r\n\t]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

function fit(text: string, width: number, right: boolean): string {
  const cut = [...text];
  const shown = cut.length > width ? `${cut.slice(0, Math.max(0, width - 1)).join('')}…` : text;
  const padding = ' '.repeat(Math.max(0, width - [...shown].length));
  return right ? padding + shown : shown + padding;
}

function isNumeric(type: ArrowDataType): boolean {
  return type.typeId === Type.Int || type.typeId === Type.Float || type.typeId === Type.Decimal;
}

/**
 * Aligned columns for a terminal. Column widths are sized from the header and the first
 * `sampleRows` rows (capped at `maxWidth`); later rows reuse them, cutting wider cells with `…`.
 * Numeric columns are right-aligned.
 */
function tableSink(schema: Schema, formatter: RowFormatter, maxWidth: number, sampleRows: number): RowSink {
  const right = schema.fields.map((f) => isNumeric(f.type as ArrowDataType));
  let widths: number[] | undefined;
  const sample: string[][] = [];
  const line = (cells: readonly string[], w: readonly number[]) =>
    cells
      .map((c, k) => fit(c, w[k]!, right[k]!))
      .join(' | ')
      .trimEnd() + '\n';
  const header = (): string => {
    const w = formatter.columns.map((c, k) => Math.min(maxWidth, Math.max([...c].length, ...sample.map((row) => [...row[k]!].length))));
    widths = w;
    const head =
      formatter.columns
        .map((c, k) => fit(c, w[k]!, false))
        .join(' | ')
        .trimEnd() + '\n';
    const rule = w.map((n) => '-'.repeat(n)).join('-+-') + '\n';
    const text = head + rule + sample.map((cells) => line(cells, w)).join('');
    sample.length = 0;
    return text;
  };
  return {
    begin: () => '',
    row(b, r) {
      const cells = formatter.formatRow(b, r).map(tableCell);
      if (widths) return line(cells, widths);
      sample.push(cells);
      return sample.length >= sampleRows ? header() : '';
    },
    end: () => (widths ? '' : header()),
  };
}
