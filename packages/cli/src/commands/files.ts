import type { FileInfo } from '@tidemark/core';
import { defineCommand } from '../command.js';
import { bigintToJson, stringifyJson, type JsonValue } from '../output/value-format.js';
import { jsonOption, printLine, snapshotOption, tableArgument, textTable, withTable, branchOption } from './shared.js';

/** `tidemark files`: list live data files. */
export const filesCommand = defineCommand({
  name: 'files',
  summary: 'list the live data files with partition, bucket, level, rows and size',
  usage: {
    synopsis: ['files <table> [--snapshot N] [--json]'],
    positionals: [tableArgument],
    options: {
      branch: branchOption,
      snapshot: { ...snapshotOption, description: 'list the files of this snapshot (default latest)' },
      json: { ...jsonOption, description: 'print JSON lines, one file per line' },
    },
  },
  async run(args, ctx) {
    await withTable({ table: args.named['table']!, branch: args.options.branch }, ctx, async (table) => {
      const snapshot = args.options.snapshot;
      const plan = await table.newRead(snapshot !== undefined ? { snapshotId: snapshot } : {}).plan();
      const files = plan.files();
      if (args.options.json) {
        for (const f of files) await printLine(ctx, stringifyJson(fileJson(f)));
        return;
      }
      if (plan.snapshotId === null) {
        await printLine(ctx, 'the table has no snapshots');
        return;
      }
      const rows = files.map((f) => [
        f.partitionPath.replace(/\/$/, '') || '-',
        String(f.bucket),
        String(f.level),
        String(f.rowCount),
        String(f.fileSize),
        f.fileName,
      ]);
      let out = textTable(['partition', 'bucket', 'level', 'rows', 'size', 'file'], rows, [false, true, true, true, true]);
      const rowsTotal = files.reduce((n, f) => n + f.rowCount, 0);
      const bytes = files.reduce((n, f) => n + f.fileSize, 0);
      out += `${files.length} file(s), ${rowsTotal} row(s), ${bytes} byte(s) in snapshot ${plan.snapshotId}\n`;
      ctx.stdout.write(out);
    });
  },
});

/** One file as the JSON object `files --json` prints. */
export function fileJson(f: FileInfo): Map<string, JsonValue> {
  return new Map<string, JsonValue>([
    ['partition', new Map(Object.entries(f.partition))],
    ['bucket', f.bucket],
    ['level', f.level],
    ['rowCount', f.rowCount],
    ['fileSize', f.fileSize],
    ['fileName', f.fileName],
    ['path', f.path],
    ['schemaId', f.schemaId],
    ['minSequenceNumber', bigintToJson(f.minSequenceNumber)],
    ['maxSequenceNumber', bigintToJson(f.maxSequenceNumber)],
    ['deleteRowCount', f.deleteRowCount],
    ['deletedByVector', f.deletedByVector],
  ]);
}
