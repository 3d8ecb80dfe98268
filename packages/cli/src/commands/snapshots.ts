import type { Snapshot } from '@tidemark/format';
import { defineCommand } from '../command.js';
import { bigintToJson, stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, jsonOption, printLine, tableArgument, textTable, withTable } from './shared.js';

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
    options: { json: { ...jsonOption, description: 'print JSON lines, one snapshot per line' } },
  },
  async run(args, ctx) {
    await withTable(args.named['table']!, ctx, async (table) => {
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
      const rows = snapshots.map((s) => [
        String(s.id),
        isoTime(s.timeMillis),
        s.commitKind,
        s.commitUser,
        s.commitIdentifier.toString(),
        count(s.totalRecordCount),
        count(s.deltaRecordCount),
      ]);
      ctx.stdout.write(
        textTable(['id', 'time', 'kind', 'commitUser', 'commitIdentifier', 'totalRecords', 'deltaRecords'], rows, [
          true,
          false,
          false,
          false,
          true,
          true,
          true,
        ]),
      );
    });
  },
});

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
