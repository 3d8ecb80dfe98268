import { createReadStream } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { Readable } from 'node:stream';
import type { RowObject } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { CliError, UsageError } from '../errors.js';
import { InputError, readCsv, readJsonLines } from '../input/row-input.js';
import { outcomeOf, printRowChange, RowChangeProgressBar } from './row-change-output.js';
import { dryRunOption, jsonOption, quietOption, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark delete`: delete keys of a primary-key table, by predicate or from a file of keys. */
export const deleteCommand = defineCommand({
  name: 'delete',
  summary: 'delete rows by predicate or by key, as one snapshot (append tables: by predicate, with deletion vectors)',
  usage: {
    synopsis: [
      'delete <table> --where "<predicate>" [--dry-run] [--commit-user U --commit-identifier N] [--json]',
      'delete <table> --input <keys-file> | - [--format jsonl|csv] [--dry-run] [--commit-user U --commit-identifier N] [--json]',
    ],
    description:
      'With --where, every key whose latest row matches the predicate (the `read --where` syntax) is deleted. With --input, each ' +
      'row names one key by its primary-key columns (other columns are ignored). Writes one delete record per key and commits ' +
      'them as one snapshot; prints how many keys were deleted. On an append table with deletion-vectors.enabled, --where marks ' +
      'the matching rows deleted in deletion vectors (no data file is rewritten); append tables without it are refused. ' +
      'With --dry-run nothing is written: it prints the rows that match per partition and the data files that would get ' +
      'deletion vectors, as the real run then does them.',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      where: {
        type: 'string',
        valueName: 'predicate',
        description: 'delete the keys whose rows match, e.g. "dt = \'2024-05-01\' AND id < 10"',
      },
      input: { type: 'string', valueName: 'file|-', description: 'keys to delete, one row per key; - for stdin' },
      format: { type: 'string', valueName: 'fmt', choices: ['jsonl', 'csv'], description: 'format of --input (default jsonl)' },
      'commit-user': { type: 'string', valueName: 'U', description: 'commit user, for idempotent retries' },
      'commit-identifier': { type: 'integer', min: 0, valueName: 'N', description: 'commit identifier; skipped if U already committed it' },
      'dry-run': { ...dryRunOption, description: 'report the rows and data files the delete would change, writing nothing' },
      quiet: quietOption,
      json: jsonOption,
    },
    conflicts: [['where', 'input']],
    requires: { format: 'input', 'commit-identifier': 'commit-user', 'commit-user': 'commit-identifier' },
  },
  async run(args, ctx) {
    const o = args.options;
    if (o.where === undefined && o.input === undefined) {
      throw new UsageError("give the keys to delete with '--where <predicate>' or '--input <file>'", 'delete');
    }
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const schema = table.schema();
      if (!table.isPrimaryKeyTable && !table.context.options.deletionVectorsEnabled) {
        throw new CliError(
          `${table.location} is an append table (no primary key) without deletion vectors: rows can be deleted only with the table option 'deletion-vectors.enabled' = 'true' (tidemark alter ${args.named['table']!} set-option deletion-vectors.enabled=true); or rewrite the affected partitions with 'tidemark write --overwrite'`,
        );
      }
      if (!table.isPrimaryKeyTable && o.where === undefined) {
        throw new UsageError("rows of an append table are deleted by predicate: use '--where <predicate>'", 'delete');
      }
      const progress = new RowChangeProgressBar(ctx, 'deleting', o.quiet || o.json);
      const options = {
        ...(o['commit-user'] !== undefined ? { commitUser: o['commit-user'] } : {}),
        ...(o['commit-identifier'] !== undefined ? { identifier: BigInt(o['commit-identifier']) } : {}),
        dryRun: o['dry-run'],
        onProgress: progress.onProgress,
      };
      let target: readonly RowObject[] | { where: string };
      if (o.where !== undefined) {
        target = { where: o.where };
      } else {
        const stream: Readable = o.input === '-' ? ctx.stdin : createReadStream(resolvePath(ctx.cwd, o.input!));
        const chunks = o.format === 'csv' ? readCsv(stream, schema.fields) : readJsonLines(stream, schema.fields);
        const keys: RowObject[] = [];
        for await (const chunk of chunks) {
          ctx.signal.throwIfAborted();
          chunk.rows.forEach((row, i) => {
            for (const k of schema.primaryKeys) {
              if (row[k] === undefined || row[k] === null) {
                throw new InputError(`input line ${chunk.lines[i]}: primary-key column '${k}' is missing or null`);
              }
            }
            keys.push(Object.fromEntries(schema.primaryKeys.map((k) => [k, row[k]])));
          });
        }
        target = keys;
      }
      const r = await table.delete(target, options).finally(() => progress.finish());
      const noun = table.isPrimaryKeyTable ? 'key' : 'row';
      await printRowChange(ctx, { command: 'delete', table: table.location, verb: 'deleted', noun, ...outcomeOf(r) }, o.json);
    });
  },
});
