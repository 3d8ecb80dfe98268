import { ChangelogManager } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { stringifyJson, type JsonValue } from '../output/value-format.js';
import { isoTime, printLine, snapshotOption, tableArgument, textTable, withTable } from './shared.js';

const actions = ['list', 'reset', 'delete'];

/** `tidemark consumers list|reset|delete`: the consumers of streaming reads. */
export const consumersCommand = defineCommand({
  name: 'consumers',
  summary: 'list, reset or delete the consumers of streaming reads',
  usage: {
    synopsis: [
      'consumers list <table> [--json]',
      'consumers reset <table> <id> --snapshot N [--create] [--json]',
      'consumers delete <table> <id> [--json]',
    ],
    description:
      'A consumer (consumer/consumer-<id>) holds the next snapshot a streaming read with that id will read; ' +
      'expiration keeps that snapshot and later ones. reset moves it (the next read starts with snapshot N); an unknown id ' +
      'is refused unless --create is given, as a new consumer holds back expiration; ' +
      'delete removes it, releasing the snapshots it held.',
    positionals: [
      { name: 'action', description: 'list, reset or delete' },
      tableArgument,
      { name: 'id', description: 'consumer id (reset, delete)', required: false },
    ],
    options: {
      snapshot: { ...snapshotOption, description: 'reset: the next snapshot the consumer reads' },
      create: { type: 'boolean', description: 'reset: create the consumer when it does not exist' },
      json: { type: 'boolean', description: 'list as JSON lines; reset and delete print one JSON object' },
    },
  },
  async run(args, ctx) {
    const action = args.named['action']!;
    if (!actions.includes(action)) throw new UsageError(`unknown consumers action '${action}'; use list, reset or delete`, 'consumers');
    const id = args.named['id'];
    if (action !== 'list' && id === undefined) throw new UsageError(`'consumers ${action}' needs a consumer id`, 'consumers');
    if (action === 'list' && id !== undefined) throw new UsageError(`unexpected argument '${id}'`, 'consumers');
    const snapshot = args.options.snapshot;
    if (action === 'reset' && snapshot === undefined) throw new UsageError("'consumers reset' needs --snapshot N", 'consumers');
    if (action !== 'reset' && snapshot !== undefined) {
      throw new UsageError("option '--snapshot' only applies to 'consumers reset'", 'consumers');
    }
    if (action !== 'reset' && args.options.create) throw new UsageError("option '--create' only applies to 'consumers reset'", 'consumers');
    await withTable(args.named['table']!, ctx, async (table) => {
      const consumers = table.consumers();
      if (action === 'reset') {
        const n = args.options.snapshot!;
        const snapshotEarliest = await table.snapshotManager.earliestId();
        // Changes of expired snapshots stay readable while their long-lived changelog is kept.
        const changelogEarliest = await new ChangelogManager(table.fileIO, table.paths).earliestId();
        const earliest =
          changelogEarliest !== null && (snapshotEarliest === null || changelogEarliest < snapshotEarliest)
            ? changelogEarliest
            : snapshotEarliest;
        const latest = await table.snapshotManager.latestId();
        if (earliest !== null && n < earliest) throw new UsageError(`snapshot ${n} has expired (earliest is ${earliest})`, 'consumers');
        if (n > (latest ?? 0) + 1) throw new UsageError(`snapshot ${n} is beyond the next snapshot ${(latest ?? 0) + 1}`, 'consumers');
        // A consumer holds back expiration until it expires itself: a mistyped id must not make one.
        if (!args.options.create && (await consumers.nextSnapshot(id!)) === null) {
          const known = (await consumers.list()).map((c) => c.id);
          const listed = known.length === 0 ? 'the table has none' : `consumers: ${known.join(', ')}`;
          throw new UsageError(`consumer '${id!}' does not exist (${listed}); pass --create to create it`, 'consumers');
        }
        await consumers.resetConsumer(id!, n);
        if (args.options.json)
          await printLine(ctx, JSON.stringify({ command: 'consumers', action, table: table.location, id, nextSnapshot: n }));
        else await printLine(ctx, `consumer '${id!}' reads snapshot ${n} next`);
      } else if (action === 'delete') {
        if (!(await consumers.deleteConsumer(id!))) throw new UsageError(`consumer '${id!}' does not exist`, 'consumers');
        if (args.options.json) await printLine(ctx, JSON.stringify({ command: 'consumers', action, table: table.location, id }));
        else await printLine(ctx, `deleted consumer '${id!}'`);
      } else {
        const list = await consumers.list();
        if (args.options.json) {
          for (const c of list) {
            const o = new Map<string, JsonValue>([
              ['id', c.id],
              ['nextSnapshot', c.nextSnapshot],
              ['lastModified', isoTime(c.lastModified.getTime())],
            ]);
            await printLine(ctx, stringifyJson(o));
          }
        } else if (list.length === 0) {
          await printLine(ctx, 'the table has no consumers');
        } else {
          const rows = list.map((c) => [c.id, String(c.nextSnapshot), isoTime(c.lastModified.getTime())]);
          ctx.stdout.write(textTable(['consumer', 'nextSnapshot', 'lastModified'], rows, [false, true]));
        }
      }
    });
  },
});
