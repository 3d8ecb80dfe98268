import type { Snapshot } from '@tidemark/format';
import { defineCommand } from '../command.js';
import { bigintToJson, stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, jsonOption, printLine, tableArgument, textTable, withTable, branchOption } from './shared.js';

/** `tidemark snapshots`: list snapshots. */
export const snapshotsCommand = defineCommand({
  name: 'snapshots',
  summary: 'list snapshots: id, time, kind, commit user and identifier, record counts',
  usage: {
    synopsis: ['snapshots <table> [--json]'],
    description:
      'Snapshots are listed oldest first. With --json each line holds id, time (ISO-8601 UTC), timeMillis, kind, ' +
      'commitUser, commitIdentifier (a number within ±(2^53-1), else a string of digits, so 9223372036854775807 ' +
      'stays exact), totalRecordCount, deltaRecordCount and schemaId.',
    positionals: [tableArgument],
    options: {
      json: { ...jsonOption, description: 'print JSON lines, one snapshot per line' },
      branch: branchOption,
    },
  },
  async run(args, ctx) {
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const snapshots: Snapshot[] = [];
      for (const id of await table.snapshotManager.sortedIds()) {
        const s = await table.snapshotManager.tryGet(id);
        if (s !== null) snapshots.push(s);
      }
      if (args.options.json) {
        for (const s of snapshots) await printLine(ctx, stringifyJson(snapshotJson(s)));
        return;
      }
      if (snapshots.length === 0) {
        await printLine(ctx, 'the table has no snapshots');
        return;
      }
      const count = (n: number | undefined): string => (n === undefined ? '' : String(n));
      const header = ['id', 'time', 'kind', 'commitUser', 'identifier', 'records', 'delta'];
      const rows = snapshots.map((s) => [
        String(s.id),
        isoTime(s.timeMillis),
        s.commitKind,
        s.commitUser,
        s.commitIdentifier.toString(),
        count(s.totalRecordCount),
        count(s.deltaRecordCount),
      ]);
      shortenColumn(header, rows, 3, TABLE_WIDTH);
      ctx.stdout.write(textTable(header, rows, [true, false, false, false, true, true, true]));
    });
  },
});

/** The text table fits a terminal this wide, the commit user giving way (it is printed whole by --json). */
const TABLE_WIDTH = 100;
/** A shortened commit user keeps at least this many characters (a UUID's first group is 8). */
const MIN_USER_WIDTH = 9;

/**
 * Cuts the cells of column `k` with `…` so the table is at most `width` characters wide (never
 * below {@link MIN_USER_WIDTH}): commit users are often UUIDs, whose head is enough to tell them apart.
 */
export function shortenColumn(header: readonly string[], rows: string[][], k: number, width: number): void {
  const widthOf = (j: number): number => Math.max([...header[j]!].length, ...rows.map((r) => [...r[j]!].length));
  const others = header.reduce((sum, _h, j) => (j === k ? sum : sum + widthOf(j)), 0) + 3 * (header.length - 1);
  const room = Math.max(MIN_USER_WIDTH, [...header[k]!].length, width - others);
  for (const r of rows) {
    const cell = [...r[k]!];
    if (cell.length > room) r[k] = `${cell.slice(0, room - 1).join('')}…`;
  }
}

/** One snapshot as the JSON object `snapshots --json` prints. */
export function snapshotJson(s: Snapshot): Map<string, JsonValue> {
  const o = new Map<string, JsonValue>([
    ['id', s.id],
    ['time', isoTime(s.timeMillis)],
    ['timeMillis', s.timeMillis],
    ['kind', s.commitKind],
    ['commitUser', s.commitUser],
    ['commitIdentifier', bigintToJson(s.commitIdentifier)],
    ['totalRecordCount', s.totalRecordCount ?? null],
    ['deltaRecordCount', s.deltaRecordCount ?? null],
    ['schemaId', s.schemaId],
  ]);
  if (s.watermark !== undefined) o.set('watermark', bigintToJson(s.watermark));
  return o;
}
