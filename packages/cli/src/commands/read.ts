import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { OUTPUT_FORMATS, writeRecordBatches, type OutputFormat } from '../output/writers.js';
import { changeBatchSchema, type ChangeBatch } from '@tidemark/core';
import { snapshotOption, tableArgument, withTable } from './shared.js';

async function* batchesOf(changes: AsyncIterable<ChangeBatch>): AsyncGenerator<import('apache-arrow').RecordBatch> {
  for await (const c of changes) yield c.batch;
}

/** `tidemark read`: print rows of a snapshot, timestamp or tag, or the changes between snapshots. */
export const readCommand = defineCommand({
  name: 'read',
  summary: 'print the rows of a table (latest, or a snapshot, timestamp or tag)',
  usage: {
    synopsis: [
      'read <table> [--snapshot N | --timestamp T | --tag NAME] [--columns a,b] [--where "<predicate>"] [--limit N] [--format jsonl|csv|table]',
      'read <table> --changes --from N [--to N] [--limit N] [--format jsonl|csv|table]',
    ],
    description:
      'jsonl prints one JSON object per row with the columns in schema order: BIGINT as a number within ±(2^53-1), ' +
      'else a string; DECIMAL as a string with exactly `scale` fraction digits; DATE as YYYY-MM-DD; TIMESTAMP(p) as ' +
      'YYYY-MM-DDTHH:MM:SS plus p fraction digits (TIMESTAMP_LTZ with a trailing Z); BYTES as base64; MAP as an ' +
      'object when its keys are strings, else an array of [key, value] pairs. ' +
      'With --changes it prints the changes of snapshots N to M (both inclusive) with a `_row_kind` column ' +
      '(+I, -U, +U, -D): the changelog files with a changelog producer, else the files APPEND snapshots added.',
    positionals: [tableArgument],
    options: {
      snapshot: { ...snapshotOption, description: 'read this snapshot id' },
      timestamp: { type: 'string', valueName: 'T', description: 'read the latest snapshot at or before T (ISO-8601 or epoch ms)' },
      tag: { type: 'string', valueName: 'NAME', description: 'read the snapshot of this tag' },
      columns: { type: 'list', valueName: 'a,b', description: 'only these columns, in this order' },
      where: { type: 'string', valueName: 'predicate', description: 'filter, e.g. "dt = \'2024-05-01\' AND id > 10"' },
      limit: { type: 'integer', min: 0, valueName: 'N', description: 'print at most N rows' },
      format: { type: 'string', valueName: 'fmt', choices: OUTPUT_FORMATS, description: 'output format (default jsonl)' },
      changes: { type: 'boolean', description: 'print the changes of snapshots --from to --to with a _row_kind column' },
      from: { ...snapshotOption, description: 'with --changes: first snapshot (inclusive)' },
      to: { ...snapshotOption, description: 'with --changes: last snapshot (inclusive, default latest)' },
    },
    conflicts: [
      ['snapshot', 'timestamp', 'tag', 'changes'],
      ['changes', 'columns'],
      ['changes', 'where'],
    ],
    requires: { from: 'changes', to: 'changes' },
  },
  async run(args, ctx) {
    const o = args.options;
    const timestamp = o.timestamp !== undefined ? parseInstant(o.timestamp, '--timestamp') : undefined;
    if (o.where !== undefined && o.where.trim() === '') throw new UsageError("option '--where' is empty", 'read');
    if (o.changes) {
      if (o.from === undefined) throw new UsageError("option '--changes' needs '--from <snapshot>'", 'read');
      const from = o.from;
      await withTable(args.named['table']!, ctx, async (table) => {
        const latest = await table.snapshotManager.latestId();
        const to = o.to ?? latest;
        if (to === null || latest === null) throw new UsageError('the table has no snapshots', 'read');
        if (to < from) throw new UsageError(`--to ${to} is before --from ${from}`, 'read');
        if (to > latest) throw new UsageError(`--to ${to} is after the latest snapshot ${latest}`, 'read');
        const stream = table.newStreamRead({ from, to, signal: ctx.signal });
        const tableSchema = table.schema();
        const schema = changeBatchSchema(tableSchema);
        await writeRecordBatches(batchesOf(stream), ctx.stdout, {
          format: (o.format ?? 'jsonl') as OutputFormat,
          schema,
          columnTypes: [...tableSchema.fields.map((f) => f.type), undefined],
          signal: ctx.signal,
          ...(o.limit !== undefined ? { limit: o.limit } : {}),
        });
      });
      return;
    }
    await withTable(args.named['table']!, ctx, async (table) => {
      const read = table.newRead({
        ...(o.snapshot !== undefined ? { snapshotId: o.snapshot } : {}),
        ...(timestamp !== undefined ? { timestamp } : {}),
        ...(o.tag !== undefined ? { tag: o.tag } : {}),
        ...(o.columns.length > 0 ? { columns: o.columns } : {}),
        ...(o.where !== undefined ? { where: o.where } : {}),
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
      });
      // Planning first surfaces missing snapshots / unknown columns before any output.
      const schema = await read.arrowSchema();
      const tableSchema = await read.tableSchema();
      const types = new Map(tableSchema.fields.map((f) => [f.name, f.type]));
      await writeRecordBatches(read.batches(), ctx.stdout, {
        format: (o.format ?? 'jsonl') as OutputFormat,
        schema,
        columnTypes: schema.fields.map((f) => types.get(f.name)),
        signal: ctx.signal,
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
      });
    });
  },
});
