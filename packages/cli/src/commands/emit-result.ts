/**
 * The common tail of `read` and `sql`: a stream of Arrow batches goes to stdout or `--output` in
 * one of the result formats, with a progress line on a terminal.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import type { OptionSpec } from '../args.js';
import type { CommandContext } from '../context.js';
import { BINARY_FORMATS, writeBinary, type BinaryFormat } from '../output/binary-writers.js';
import { openOutput } from '../output/output-target.js';
import type { PaimonTypeHint } from '../output/value-format.js';
import { OUTPUT_FORMATS, writeRecordBatches, type OutputFormat } from '../output/writers.js';
import { countedBatches, rowProgress } from './shared.js';

/** Every `--format` of a result: the text formats and the binary ones. */
export const RESULT_FORMATS = [...OUTPUT_FORMATS, ...BINARY_FORMATS] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

export const resultFormatOption = {
  type: 'string',
  valueName: 'fmt',
  choices: RESULT_FORMATS,
  description: 'output format (default jsonl); parquet and arrow are binary, for --output or a pipe',
} as const satisfies OptionSpec;

export const outputOption = {
  type: 'string',
  valueName: 'file',
  description: 'write the result to this file (complete or not at all) instead of stdout',
} as const satisfies OptionSpec;

/** What {@link emitResult} writes. */
export interface ResultToEmit {
  readonly command: string;
  readonly format: ResultFormat;
  readonly output: string | undefined;
  readonly batches: AsyncIterable<RecordBatch>;
  readonly schema: Schema;
  /** Paimon types of the columns, for exact text rendering (see `createRowFormatter`). */
  readonly columnTypes?: readonly (PaimonTypeHint | undefined)[];
  readonly limit?: number;
  readonly quiet: boolean;
}

/** Writes the result; resolves with the number of rows written. */
export async function emitResult(ctx: CommandContext, r: ResultToEmit): Promise<number> {
  const target = await openOutput(ctx, r.command, r.format, r.output);
  const progress = rowProgress(ctx, r.command === 'read' ? 'reading' : 'query', r.quiet);
  try {
    const batches = countedBatches(limited(r.batches, r.limit), progress);
    let rows: number;
    if ((BINARY_FORMATS as readonly string[]).includes(r.format)) {
      ({ rows } = await writeBinary(batches, target.stream, {
        format: r.format as BinaryFormat,
        schema: r.schema,
        arrowContainer: target.isFile ? 'file' : 'stream',
        signal: ctx.signal,
      }));
    } else {
      ({ rows } = await writeRecordBatches(batches, target.stream, {
        format: r.format as OutputFormat,
        schema: r.schema,
        signal: ctx.signal,
        ...(r.columnTypes ? { columnTypes: r.columnTypes } : {}),
      }));
    }
    progress.finish();
    await target.commit();
    return rows;
  } catch (e) {
    progress.finish();
    await target.abort();
    throw e;
  }
}

/** At most `limit` rows of `batches` (the source is closed early). */
async function* limited(batches: AsyncIterable<RecordBatch>, limit: number | undefined): AsyncGenerator<RecordBatch> {
  if (limit === undefined) {
    yield* batches;
    return;
  }
  let left = limit;
  if (left <= 0) return;
  for await (const b of batches) {
    if (b.numRows >= left) {
      yield b.numRows === left ? b : b.slice(0, left);
      return;
    }
    left -= b.numRows;
    yield b;
  }
}
