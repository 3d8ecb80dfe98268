import type { StreamStart } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { parseDuration, parseInstant } from '../options/duration.js';
import { writeRecordBatches } from '../output/writers.js';
import { tableArgument, withTable, branchOption } from './shared.js';

const streamUsage = {
  synopsis: ['stream <table> [--from earliest|latest|N|T] [--consumer-id ID] [--max-snapshots N] [--poll-interval D] [--format jsonl]'],
  description:
    'Prints the changes of each new snapshot as JSON lines with a `_row_kind` column (+I, -U, +U, -D), following ' +
    'the table until Ctrl-C or --max-snapshots snapshots. --from latest (default) prints the latest snapshot as +I ' +
    'rows first; earliest, a snapshot id N or a time T print the changes of every snapshot from there on. With ' +
    '--consumer-id the progress is kept in consumer/consumer-<ID> (as Paimon does) and a restart resumes after the ' +
    'last snapshot whose rows were all printed; expiration keeps the snapshots the consumer still needs.',
  positionals: [tableArgument],
  options: {
    branch: branchOption,
    from: { type: 'string', valueName: 'start', description: 'earliest, latest (default), a snapshot id or a time (ISO-8601 or epoch ms)' },
    'consumer-id': { type: 'string', valueName: 'ID', description: 'record progress under this consumer id and resume from it' },
    'max-snapshots': { type: 'integer', min: 1, valueName: 'N', description: 'stop after N snapshots (snapshots without changes count)' },
    'poll-interval': { type: 'string', valueName: 'D', description: 'wait between looks for new snapshots, e.g. 500ms, 2s (default 1s)' },
    format: { type: 'string', valueName: 'fmt', choices: ['jsonl'], description: 'output format (jsonl)' },
  },
} as const;

/** Parses `--from`: earliest, latest, a snapshot id, or a time. */
function parseStart(value: string | undefined): StreamStart {
  if (value === undefined) return 'latest';
  const v = value.trim();
  if (v === 'earliest' || v === 'latest') return v;
  if (/^\d+$/.test(v) && v.length < 13) {
    const id = Number(v);
    if (id < 1) throw new UsageError(`option '--from' needs a snapshot id >= 1, got '${value}'`);
    return id;
  }
  return new Date(parseInstant(v, '--from'));
}

function defineStream(name: string, summary: string) {
  return defineCommand({
    name,
    summary,
    usage: { ...streamUsage, synopsis: streamUsage.synopsis.map((s) => s.replace(/^stream/, name)) },
    async run(args, ctx) {
      const o = args.options;
      const from = parseStart(o.from);
      const poll = o['poll-interval'] !== undefined ? parseDuration(o['poll-interval'], '--poll-interval') : 1000;
      await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
        const types = new Map<string, import('@tidemark/format').DataType>(table.schema().fields.map((f) => [f.name, f.type]));
        const stream = table.newStreamRead({
          from,
          pollIntervalMs: poll,
          signal: ctx.signal,
          ...(o['consumer-id'] !== undefined ? { consumerId: o['consumer-id'] } : {}),
          ...(o['max-snapshots'] !== undefined ? { maxSnapshots: o['max-snapshots'] } : {}),
        });
        for await (const change of stream) {
          // Each batch reaches stdout before the stream is asked for more (that is when progress is recorded).
          await writeRecordBatches([change.batch], ctx.stdout, {
            format: 'jsonl',
            columnTypes: change.batch.schema.fields.map((f) => types.get(f.name)),
            signal: ctx.signal,
          });
        }
      });
    },
  });
}

/** `tidemark stream`: follow a table's changes. */
export const streamCommand = defineStream('stream', 'print the changes of new snapshots as they are committed (streaming read)');
/** `tidemark tail`: the same as `stream`. */
export const tailCommand = defineStream('tail', 'the same as stream');
