import type { RowObject } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { outcomeOf, printRowChange, RowChangeProgressBar } from './row-change-output.js';
import { dryRunOption, jsonOption, quietOption, tableArgument, withTable, branchOption } from './shared.js';

/** `tidemark update`: set columns of the rows matching a predicate, as one snapshot. */
export const updateCommand = defineCommand({
  name: 'update',
  summary: 'set columns of the rows matching a predicate, as one snapshot (append tables: with deletion vectors)',
  usage: {
    synopsis: [
      'update <table> --where "<predicate>" --set \'{"column": value, ...}\' [--dry-run] [--commit-user U --commit-identifier N] [--json]',
    ],
    description:
      'Every row whose latest version matches the predicate (the `read --where` syntax) gets the values of --set, a JSON object ' +
      'of column → new value (values as `write` takes them in jsonl). On a primary-key table the rows are written back as ' +
      'upserts (primary-key columns cannot be set). On an append table with deletion-vectors.enabled the old rows are marked ' +
      'deleted in deletion vectors and the new ones written, in the same snapshot; append tables without it are refused. ' +
      'With --dry-run nothing is written: it prints the rows that match per partition (and, on append tables, the data ' +
      'files whose rows would be marked deleted).',
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      where: { type: 'string', valueName: 'predicate', description: 'rows to update, e.g. "dt = \'2024-05-01\' AND id < 10"' },
      set: { type: 'string', valueName: 'json', description: 'new values, e.g. \'{"status": "done", "retries": 0}\'' },
      'commit-user': { type: 'string', valueName: 'U', description: 'commit user, for idempotent retries' },
      'commit-identifier': { type: 'integer', min: 0, valueName: 'N', description: 'commit identifier; skipped if U already committed it' },
      'dry-run': { ...dryRunOption, description: 'report the rows and data files the update would change, writing nothing' },
      quiet: quietOption,
      json: jsonOption,
    },
    requires: { 'commit-identifier': 'commit-user', 'commit-user': 'commit-identifier' },
  },
  async run(args, ctx) {
    const o = args.options;
    if (o.where === undefined) throw new UsageError("give the rows to update with '--where <predicate>'", 'update');
    if (o.set === undefined) throw new UsageError('give the new values with \'--set {"column": value}\'', 'update');
    const set = parseSet(o.set);
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const progress = new RowChangeProgressBar(ctx, 'updating', o.quiet || o.json);
      const options = {
        ...(o['commit-user'] !== undefined ? { commitUser: o['commit-user'] } : {}),
        ...(o['commit-identifier'] !== undefined ? { identifier: BigInt(o['commit-identifier']) } : {}),
        dryRun: o['dry-run'],
        onProgress: progress.onProgress,
      };
      const r = await table.update({ where: o.where!, set }, options).finally(() => progress.finish());
      await printRowChange(ctx, { command: 'update', table: table.location, verb: 'updated', noun: 'row', ...outcomeOf(r) }, o.json);
    });
  },
});

function parseSet(text: string): RowObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`option '--set' needs a JSON object such as '{"status": "done"}' (${(e as Error).message})`, 'update');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) {
    throw new UsageError('option \'--set\' needs a JSON object with at least one column, such as \'{"status": "done"}\'', 'update');
  }
  return value as RowObject;
}
