import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, printLine, snapshotOption, tableArgument, textTable, withTable } from './shared.js';

const actions = ['create', 'delete', 'list'];

/** `tidemark tag create|delete|list`. */
export const tagCommand = defineCommand({
  name: 'tag',
  summary: 'create, delete or list tags',
  usage: {
    synopsis: ['tag create <table> <name> [--snapshot N] [--json]', 'tag delete <table> <name> [--json]', 'tag list <table> [--json]'],
    positionals: [
      { name: 'action', description: 'create, delete or list' },
      tableArgument,
      { name: 'name', description: 'tag name (create, delete)', required: false },
    ],
    options: {
      snapshot: { ...snapshotOption, description: 'tag this snapshot (default latest)' },
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
    const tableArg = args.named['table']!;
    await withTable(tableArg, ctx, async (table) => {
      if (action === 'create') {
        const tag = await table.createTag(name!, args.options.snapshot !== undefined ? { snapshotId: args.options.snapshot } : {});
        if (args.options.json)
          await printLine(ctx, JSON.stringify({ command: 'tag', action, table: table.location, name, snapshotId: tag.id }));
        else await printLine(ctx, `created tag '${name!}' on snapshot ${tag.id}`);
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
