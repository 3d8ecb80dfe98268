import { tagDurationOf } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { parseDuration } from '../options/duration.js';
import { UsageError } from '../errors.js';
import { stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, printLine, snapshotOption, tableArgument, textTable, withTable } from './shared.js';

const actions = ['create', 'delete', 'list'];

/** `tidemark tag create|delete|list`. */
export const tagCommand = defineCommand({
  name: 'tag',
  summary: 'create, delete or list tags',
  usage: {
    synopsis: [
      'tag create <table> <name> [--snapshot N] [--time-retained <duration>] [--json]',
      'tag delete <table> <name> [--json]',
      'tag list <table> [--json]',
    ],
    description:
      'A tag created with --time-retained (or on a table setting tag.default-time-retained) records its creation time and is ' +
      'deleted by `tidemark maintain` (and by commits of tables with tag.* options) once that time has passed. Durations: 12h, 7d.',
    positionals: [
      { name: 'action', description: 'create, delete or list' },
      tableArgument,
      { name: 'name', description: 'tag name (create, delete)', required: false },
    ],
    options: {
      snapshot: { ...snapshotOption, description: 'tag this snapshot (default latest)' },
      'time-retained': { type: 'string', valueName: 'duration', description: 'keep the tag this long (default tag.default-time-retained)' },
      json: { type: 'boolean', description: 'list as JSON lines; create and delete print one JSON object' },
    },
  },
  async run(args, ctx) {
    const action = args.named['action']!;
    if (!actions.includes(action)) throw new UsageError(`unknown tag action '${action}'; use create, delete or list`, 'tag');
    const name = args.named['name'];
    if (action !== 'list' && name === undefined) throw new UsageError(`'tag ${action}' needs a tag name`, 'tag');
    if (action === 'list' && name !== undefined) throw new UsageError(`unexpected argument '${name}'`, 'tag');
    if (action !== 'create' && args.options.snapshot !== undefined)
      throw new UsageError(`option '--snapshot' only applies to 'tag create'`, 'tag');
    if (action !== 'create' && args.options['time-retained'] !== undefined)
      throw new UsageError(`option '--time-retained' only applies to 'tag create'`, 'tag');
    const retainedMs =
      args.options['time-retained'] !== undefined ? parseDuration(args.options['time-retained'], '--time-retained') : undefined;
    const tableArg = args.named['table']!;
    await withTable(tableArg, ctx, async (table) => {
      if (action === 'create') {
        const tag = await table.createTag(name!, {
          ...(args.options.snapshot !== undefined ? { snapshotId: args.options.snapshot } : {}),
          ...(retainedMs !== undefined ? { timeRetained: tagDurationOf(retainedMs) } : {}),
          now: ctx.now,
        });
        const retained = tag.tagTimeRetained ? tag.tagTimeRetained.seconds + tag.tagTimeRetained.nanos / 1e9 : null;
        if (args.options.json)
          await printLine(
            ctx,
            JSON.stringify({ command: 'tag', action, table: table.location, name, snapshotId: tag.id, timeRetainedSeconds: retained }),
          );
        else await printLine(ctx, `created tag '${name!}' on snapshot ${tag.id}${retained !== null ? `, retained for ${retained}s` : ''}`);
      } else if (action === 'delete') {
        await table.deleteTag(name!);
        if (args.options.json) await printLine(ctx, JSON.stringify({ command: 'tag', action, table: table.location, name }));
        else await printLine(ctx, `deleted tag '${name!}'`);
      } else {
        const tags = await table.listTags();
        if (args.options.json) {
          for (const { name: n, tag } of tags) {
            const o = new Map<string, JsonValue>([
              ['name', n],
              ['snapshotId', tag.id],
              ['snapshotTime', isoTime(tag.timeMillis)],
              ['createTime', tag.tagCreateTime ? createTime(tag.tagCreateTime.millis) : null],
              ['timeRetainedSeconds', tag.tagTimeRetained ? tag.tagTimeRetained.seconds + tag.tagTimeRetained.nanos / 1e9 : null],
            ]);
            await printLine(ctx, stringifyJson(o));
          }
        } else if (tags.length === 0) {
          await printLine(ctx, 'the table has no tags');
        } else {
          const rows = tags.map(({ name: n, tag }) => [
            n,
            String(tag.id),
            isoTime(tag.timeMillis),
            tag.tagCreateTime ? createTime(tag.tagCreateTime.millis) : '',
          ]);
          ctx.stdout.write(textTable(['name', 'snapshot', 'snapshotTime', 'createTime'], rows, [false, true]));
        }
      }
    });
  },
});

/**
 * `tagCreateTime` is a local wall-clock time without a zone (Java's `LocalDateTime.now()`): it is
 * taken as this machine's local time and printed in UTC with `Z`, like every other time the CLI
 * prints, so it can be compared with the snapshot time next to it.
 */
export function createTime(localMillis: number): string {
  // The offset at the local instant itself; re-evaluated once so a DST change in between is honoured.
  const first = localMillis + new Date(localMillis).getTimezoneOffset() * 60_000;
  return isoTime(localMillis + new Date(first).getTimezoneOffset() * 60_000);
}
