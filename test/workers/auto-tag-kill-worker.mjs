// Child process of test/auto-tag-kill.test.ts: commits one row at a given clock time to a table with
// automatic tags and is killed with SIGKILL right before (or right after) it writes the tag file.
// Imports the packages from dist (build first).
// Configuration comes as one JSON argument: { root, rows, now, kill: 'before-tag' | 'after-tag', s3? }.
import { LocalFileIO, S3FileIO } from '@tidemark/storage';
import { openTable } from '@tidemark/core';

const config = JSON.parse(process.argv[2] ?? '{}');
const inner = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
const die = () => process.kill(process.pid, 'SIGKILL');
// Every call goes to the real FileIO; creating a tag file is where the process dies.
const io = new Proxy(inner, {
  get(target, prop) {
    if (prop === 'createIfAbsent') {
      return async (path, data) => {
        const tag = /\/tag\/tag-[^/]+$/.test(path);
        if (tag && config.kill === 'before-tag') die();
        const result = await target.createIfAbsent(path, data);
        if (tag && config.kill === 'after-tag') die();
        return result;
      };
    }
    const v = Reflect.get(target, prop, target);
    return typeof v === 'function' ? v.bind(target) : v;
  },
});
const table = await openTable(config.root, { fileIO: io });
const writer = table.newBatchWrite();
await writer.write(config.rows);
const result = await table.newCommit({ now: () => config.now }).commit({ messages: await writer.prepareCommit() });
await writer.close();
// Reached only when no tag was due: the test then reports the worker as not killed.
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
