import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { changeBatchSchema, type ChangeBatch, type Table } from '@tidemark/core';
import { emitResult, outputOption, resultFormatOption, type ResultFormat } from './emit-result.js';
import { quietOption, snapshotOption, tableArgument, withTable, branchOption } from './shared.js';

async function* batchesOf(changes: AsyncIterable<ChangeBatch>): AsyncGenerator<import('apache-arrow').RecordBatch> {
  for await (const c of changes) yield c.batch;
}

/** `tidemark read`: print rows of a snapshot, timestamp or tag, or the changes between snapshots. */
export const readCommand = defineCommand({
  name: 'read',
  summary: 'print the rows of a table (latest, or a snapshot, timestamp or tag)',
  usage: {
    synopsis: [
      'read <table> [--snapshot N | --timestamp T | --tag NAME] [--columns a,b] [--where "<predicate>"] [--limit N] [--format F] [--output FILE]',
      'read <table> --incremental-between A,B [--columns a,b] [--where "<predicate>"] [--limit N] [--format F] [--output FILE]',
      'read <table> --changes --from N [--to N] [--limit N] [--format F] [--output FILE]',
    ],
    description:
      'jsonl prints one JSON object per row with the columns in schema order: BIGINT as a number within ±(2^53-1), ' +
      'else a string; DECIMAL as a string with exactly `scale` fraction digits; DATE as YYYY-MM-DD; TIMESTAMP(p) as ' +
      'YYYY-MM-DDTHH:MM:SS plus p fraction digits (TIMESTAMP_LTZ with a trailing Z); BYTES as base64; MAP as an ' +
      'object when its keys are strings, else an array of [key, value] pairs. table prints NULL for a null (and a string ' +
      'that reads "null" or is empty in double quotes). parquet writes one Parquet file with the table\'s types and field ids; ' +
      'arrow writes Arrow IPC: the file format with --output, the stream format to a pipe. ' +
      'With --incremental-between A,B (snapshot ids or tag names) it prints the rows added by the snapshots after A up to B, ' +
      "as Paimon's incremental-between option does: for primary-key tables the records written, not merged. " +
      'With --changes it prints the changes of snapshots N to M (both inclusive) with a `_row_kind` column ' +
      '(+I, -U, +U, -D): the changelog files with a changelog producer, else the files APPEND snapshots added.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      snapshot: { ...snapshotOption, description: 'read this snapshot id' },
      timestamp: { type: 'string', valueName: 'T', description: 'read the latest snapshot at or before T (ISO-8601 or epoch ms)' },
      tag: { type: 'string', valueName: 'NAME', description: 'read the snapshot of this tag' },
      columns: { type: 'list', valueName: 'a,b', description: 'only these columns, in this order' },
      where: { type: 'string', valueName: 'predicate', description: 'filter, e.g. "dt = \'2024-05-01\' AND id > 10"' },
      limit: { type: 'integer', min: 0, valueName: 'N', description: 'print at most N rows' },
      format: resultFormatOption,
      output: outputOption,
      quiet: quietOption,
      'incremental-between': {
        type: 'string',
        valueName: 'A,B',
        description: 'the rows added after snapshot (or tag) A up to B, e.g. 3,7 or tag1,tag2',
      },
      changes: { type: 'boolean', description: 'print the changes of snapshots --from to --to with a _row_kind column' },
      from: { ...snapshotOption, description: 'with --changes: first snapshot (inclusive)' },
      to: { ...snapshotOption, description: 'with --changes: last snapshot (inclusive, default latest)' },
    },
    conflicts: [
      ['snapshot', 'timestamp', 'tag', 'changes', 'incremental-between'],
      ['changes', 'columns'],
      ['changes', 'where'],
    ],
    requires: { from: 'changes', to: 'changes' },
  },
  async run(args, ctx) {
    const o = args.options;
    const timestamp = o.timestamp !== undefined ? parseInstant(o.timestamp, '--timestamp') : undefined;
    if (o.where !== undefined && o.where.trim() === '') throw new UsageError("option '--where' is empty", 'read');
    const format = (o.format ?? 'jsonl') as ResultFormat;
    if (o.changes) {
      if (o.from === undefined) throw new UsageError("option '--changes' needs '--from <snapshot>'", 'read');
      const from = o.from;
      await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
        const latest = await table.snapshotManager.latestId();
        const to = o.to ?? latest;
        if (to === null || latest === null) throw new UsageError('the table has no snapshots', 'read');
        if (to < from) throw new UsageError(`--to ${to} is before --from ${from}`, 'read');
        if (to > latest) throw new UsageError(`--to ${to} is after the latest snapshot ${latest}`, 'read');
        const stream = table.newStreamRead({ from, to, signal: ctx.signal });
        const tableSchema = table.schema();
        await emitResult(ctx, {
          command: 'read',
          format,
          output: o.output,
          batches: batchesOf(stream),
          schema: changeBatchSchema(tableSchema),
          columnTypes: [...tableSchema.fields.map((f) => f.type), undefined],
          quiet: o.quiet,
          ...(o.limit !== undefined ? { limit: o.limit } : {}),
        });
      });
      return;
    }
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const selection = {
        ...(o.columns.length > 0 ? { columns: o.columns } : {}),
        ...(o.where !== undefined ? { where: o.where } : {}),
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
      };
      const between = o['incremental-between'];
      const read =
        between !== undefined
          ? table.newIncrementalRead({ ...(await incrementalRange(table, between)), ...selection })
          : table.newRead({
              ...(o.snapshot !== undefined ? { snapshotId: o.snapshot } : {}),
              ...(timestamp !== undefined ? { timestamp } : {}),
              ...(o.tag !== undefined ? { tag: o.tag } : {}),
              ...selection,
            });
      // Planning first surfaces missing snapshots / unknown columns before any output.
      const schema = await read.arrowSchema();
      const tableSchema = await read.tableSchema();
      const types = new Map(tableSchema.fields.map((f) => [f.name, f.type]));
      await emitResult(ctx, {
        command: 'read',
        format,
        output: o.output,
        batches: read.batches(),
        schema,
        columnTypes: schema.fields.map((f) => types.get(f.name)),
        quiet: o.quiet,
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
      });
    });
  },
});

/**
 * `--incremental-between A,B` as snapshot ids: each side is a snapshot id or a tag name, as in
 * Paimon's `incremental-between` option; the range is (A, B].
 *
 * @throws UsageError for a malformed value or a range that runs backwards.
 */
async function incrementalRange(table: Table, value: string): Promise<{ fromSnapshotId: number; toSnapshotId: number }> {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length !== 2 || parts.some((p) => p === '')) {
    throw new UsageError(`option '--incremental-between' needs two snapshot ids or tag names separated by a comma, got '${value}'`, 'read');
  }
  const [from, to] = await Promise.all(parts.map((p) => snapshotIdOf(table, p)));
  if (to! < from!) {
    throw new UsageError(`--incremental-between ${value}: the end (snapshot ${to}) is before the start (snapshot ${from})`, 'read');
  }
  return { fromSnapshotId: from!, toSnapshotId: to! };
}

/** A snapshot id given as digits, or the snapshot of a tag. */
async function snapshotIdOf(table: Table, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  return (await table.tagManager.tag(ref)).id;
}
