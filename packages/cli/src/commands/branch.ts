import { defineCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { stringifyJson, type JsonValue } from '../output/value-format.js';
import { branchOption, dryRunOption, isoTime, jsonOption, printLine, tableArgument, textTable, withTable } from './shared.js';

const actions = ['create', 'list', 'delete', 'fast-forward'];

/** `tidemark branch create|list|delete|fast-forward`. */
export const branchCommand = defineCommand({
  name: 'branch',
  summary: 'create, list, delete or fast-forward branches',
  usage: {
    synopsis: [
      'branch create <table> <name> [--tag T] [--json]',
      'branch list <table> [--json]',
      'branch delete <table> <name> [--dry-run] [--json]',
      'branch fast-forward <table> <name> [--dry-run] [--json]',
    ],
    description:
      'A branch keeps its own snapshots, schemas and tags under branch/branch-<name>/ (as Paimon does) and shares the ' +
      "table's data files. create makes an empty branch with the table's schema, or with --tag one that starts at that tag. " +
      "fast-forward replaces main's history from the branch's earliest snapshot on with the branch's (stop writers of main first). " +
      'Every read, write and maintenance command takes --branch <name>.',
    positionals: [
      { name: 'action', description: 'create, list, delete or fast-forward' },
      tableArgument,
      { name: 'name', description: 'branch name (create, delete, fast-forward)', required: false },
    ],
    options: {
      tag: { type: 'string', valueName: 'T', description: 'create: start the branch at this tag' },
      branch: { ...branchOption, description: 'the branch to work from: create copies from it, fast-forward moves it (default main)' },
      'dry-run': { ...dryRunOption, description: 'delete, fast-forward: say what would be removed and copied, changing nothing' },
      json: { ...jsonOption, description: 'list as JSON lines; the other actions print one JSON object' },
    },
  },
  async run(args, ctx) {
    const action = args.named['action']!;
    if (!actions.includes(action))
      throw new UsageError(`unknown branch action '${action}'; use create, list, delete or fast-forward`, 'branch');
    const name = args.named['name'];
    if (action !== 'list' && name === undefined) throw new UsageError(`'branch ${action}' needs a branch name`, 'branch');
    if (action === 'list' && name !== undefined) throw new UsageError(`unexpected argument '${name}'`, 'branch');
    if (action !== 'create' && args.options.tag !== undefined)
      throw new UsageError(`option '--tag' only applies to 'branch create'`, 'branch');
    if ((action === 'create' || action === 'list') && args.options['dry-run'])
      throw new UsageError(`option '--dry-run' only applies to 'branch delete' and 'branch fast-forward'`, 'branch');
    const json = args.options.json;
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const branches = table.branches();
      const out = (o: Record<string, unknown>): Promise<void> =>
        printLine(ctx, JSON.stringify({ command: 'branch', action, table: table.location, ...o }));
      if (action === 'create') {
        const r = await branches.create(name!, args.options.tag !== undefined ? { tag: args.options.tag } : {});
        if (json) await out({ ...r });
        else
          await printLine(
            ctx,
            r.fromTag === null
              ? `created empty branch '${r.name}' with schema ${r.schemaIds[r.schemaIds.length - 1]!}`
              : `created branch '${r.name}' from tag '${r.fromTag}' (snapshot ${r.snapshotId!})`,
          );
      } else if (action === 'delete') {
        const r = await branches.delete(name!, { dryRun: args.options['dry-run'] });
        if (json) await out({ ...r });
        else
          await printLine(
            ctx,
            `${r.dryRun ? 'would delete' : 'deleted'} branch '${r.name}': ${r.snapshots} snapshot(s), ${r.tags} tag(s), ` +
              `${r.schemas} schema(s), ${r.files} file(s) in all; data files only it used are left to remove-orphan-files`,
          );
      } else if (action === 'fast-forward') {
        const r = await branches.fastForward(name!, { dryRun: args.options['dry-run'] });
        if (json) await out({ ...r });
        else {
          const [took, removed] = r.dryRun ? ['would take', 'would remove'] : ['took', 'removed'];
          await printLine(
            ctx,
            `'${r.target}' ${took} the history of branch '${r.branch}' from snapshot ${r.fromSnapshotId} on: ` +
              `snapshots ${r.fromSnapshotId}..${r.latestSnapshotId}, ${r.copiedSchemas.length} schema(s), ${r.copiedTags.length} tag(s)`,
          );
          if (r.removedSnapshots.length > 0 || r.removedTags.length > 0 || r.removedSchemas.length > 0)
            await printLine(
              ctx,
              `  ${removed} ${r.removedSnapshots.length} snapshot(s), ${r.removedSchemas.length} schema(s) and tag(s) ` +
                `${r.removedTags.length === 0 ? 'none' : r.removedTags.map((t) => `'${t}'`).join(', ')} of '${r.target}'`,
            );
          if (r.movedConsumers.length > 0)
            await printLine(
              ctx,
              `  ${r.dryRun ? 'would move' : 'moved'} consumer(s) ${r.movedConsumers.map((c) => `'${c}'`).join(', ')} of '${r.target}' back to the branch's snapshots`,
            );
        }
      } else {
        const list = await branches.list();
        if (json) {
          for (const b of list) {
            const o = new Map<string, JsonValue>([
              ['name', b.name],
              ['earliestSnapshotId', b.earliestSnapshotId],
              ['latestSnapshotId', b.latestSnapshotId],
              ['latestSchemaId', b.latestSchemaId],
              ['tags', b.tags],
              ['createdFromTag', b.createdFromTag],
              ['createTime', b.createTime === null ? null : b.createTime.toISOString()],
            ]);
            await printLine(ctx, stringifyJson(o));
          }
        } else if (list.length === 0) {
          await printLine(ctx, 'the table has no branches besides main');
        } else {
          const rows = list.map((b) => [
            b.name,
            b.latestSnapshotId === null ? '' : `${b.earliestSnapshotId!}..${b.latestSnapshotId}`,
            b.latestSchemaId === null ? '' : String(b.latestSchemaId),
            String(b.tags),
            b.createdFromTag ?? '',
            b.createTime === null ? '' : isoTime(b.createTime.getTime()),
          ]);
          ctx.stdout.write(textTable(['name', 'snapshots', 'schema', 'tags', 'fromTag', 'createTime'], rows, [false, false, true, true]));
        }
      }
    });
  },
});
