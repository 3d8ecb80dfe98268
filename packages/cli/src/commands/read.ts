import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseInstant } from '../options/duration.js';
import { OUTPUT_FORMATS, writeRecordBatches, type OutputFormat } from '../output/writers.js';
import { snapshotOption, tableArgument, withTable } from './shared.js';

/** `tidemark read`: print rows of a snapshot, timestamp or tag. */
export const readCommand = defineCommand({
  name: 'read',
  summary: 'print the rows of a table (latest, or a snapshot, timestamp or tag)',
  usage: {
    synopsis: ['read <table> [--snapshot N | --timestamp T | --tag NAME] [--columns a,b] [--where "<predicate>"] [--limit N] [--format jsonl|csv|table]'],
    description:
      'jsonl prints one JSON object per row with the columns in schema order: BIGINT as a number within ±(2^53-1), ' +
      'else a string; DECIMAL as a string with exactly `scale` fraction digits; DATE as YYYY-MM-DD; TIMESTAMP(p) as ' +
      'YYYY-MM-DDTHH:MM:SS plus p fraction digits (TIMESTAMP_LTZ with a trailing Z); BYTES as base64; MAP as an ' +
      'object when its keys are strings, else an array of [key, value] pairs.',
    positionals: [tableArgument],
    options: {
      snapshot: { ...snapshotOption, description: 'read this snapshot id' },
      timestamp: { type: 'string', valueName: 'T', description: 'read the latest snapshot at or before T (ISO-8601 or epoch ms)' },
      tag: { type: 'string', valueName: 'NAME', description: 'read the snapshot of this tag' },
      columns: { type: 'list', valueName: 'a,b', description: 'only these columns, in this order' },
      where: { type: 'string', valueName: 'predicate', description: 'filter, e.g. "dt = \'2024-05-01\' AND id > 10"' },
      limit: { type: 'integer', min: 0, valueName: 'N', description: 'print at most N rows' },
      format: { type: 'string', valueName: 'fmt', choices: OUTPUT_FORMATS, description: 'output format (default jsonl)' },
    },
    conflicts: [['snapshot', 'timestamp', 'tag']],
  },
  async run(args, ctx) {
    const o = args.options;
    const timestamp = o.timestamp !== undefined ? parseInstant(o.timestamp, '--timestamp') : undefined;
    if (o.where !== undefined && o.where.trim() === '') throw new UsageError("option '--where' is empty", 'read');
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
