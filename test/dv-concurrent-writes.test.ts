/**
 * Two `tidemark write` processes upsert the same keys of a deletion-vector table at the same time,
 * round after round, on local disk and on the real S3 server. Whichever commits second has its
 * files re-sequenced above the other's, which drops the compaction it made before committing; a
 * write that exits 0 must still have its rows visible to batch reads, so after each round every key
 * holds the value of the write whose APPEND snapshot came last (and each key appears once). Runs the
 * built binary (`npx turbo run build` first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinPath } from '@tidemark/storage';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { cliFor, lines } from './support/cli-backend.js';
import { packagesBuilt } from './support/built.js';
import { columns, optionArgs } from './support/table-definitions.mjs';

const built = packagesBuilt('concurrent deletion-vector writes', 'cli/dist/index.js');

const KEYS = 500;
const ROUNDS = 2;

const input = (value: string): string => Array.from({ length: KEYS }, (_, k) => JSON.stringify({ k, v: value })).join('\n') + '\n';

describe.concurrent.each(storageBackends('concurrent dv writes'))('$name', (backend) => {
  const cli = cliFor(backend);
  let wh: BackendWarehouse | undefined;
  beforeAll(async () => {
    if (backend.available && built) wh = await backend.open();
  });
  afterAll(async () => wh?.cleanup());

  // Each round is two CLI processes writing 500 rows at once: the timeout is a hang guard.
  it.skipIf(!backend.available || !built)(
    'the write that commits second has its rows visible when it exits 0',
    async () => {
      const table = joinPath(wh!.root, 'db.db', 'dv');
      const schema = JSON.stringify(columns('k INT NOT NULL', 'v STRING'));
      const options = optionArgs({ 'deletion-vectors.enabled': 'true', bucket: '2' });
      const created = await cli(['create', table, '--schema', schema, '--primary-key', 'k', ...options]);
      expect(created.code, created.stderr).toBe(0);
      expect((await cli(['write', table], { stdin: input('base') })).code).toBe(0);
      for (let round = 1; round <= ROUNDS; round++) {
        const users = ['a', 'b'].map((w) => `${w}-${round}`);
        const writes = await Promise.all(
          users.map((user) =>
            cli(['write', table, '--commit-user', user, '--commit-identifier', '1', '--json'], { stdin: input(user), timeoutMs: 600_000 }),
          ),
        );
        const snapshots = lines((await cli(['snapshots', table, '--json'])).stdout).map(
          (l) => JSON.parse(l) as { id: number; kind: string; commitUser: string },
        );
        const appendOf = (user: string): number => snapshots.find((s) => s.commitUser === user && s.kind === 'APPEND')!.id;
        const [later, earlier] = appendOf(users[0]!) > appendOf(users[1]!) ? [0, 1] : [1, 0];
        // The earlier write never conflicts; the later one exits 0 with its rows visible, or fails
        // saying its rows are committed but not compacted.
        expect(writes[earlier]!.code, writes[earlier]!.stderr).toBe(0);
        const last = writes[later]!;
        if (last.code !== 0) {
          expect(last.stderr).toMatch(/holds the write's rows, but its compaction lost to concurrent commits .*tidemark compact/);
          expect((await cli(['compact', table])).code).toBe(0);
        } else {
          // No tidemark line at all (the AWS SDK may warn about the Node version on S3).
          expect(last.stderr).not.toMatch(/tidemark/);
          expect(JSON.parse(last.stdout)).toMatchObject({ status: 'committed', rows: KEYS });
        }
        const read = await cli(['read', table, '--format', 'csv']);
        expect(read.code, read.stderr).toBe(0);
        const rows = lines(read.stdout.replaceAll('\r', '')).slice(1);
        expect(rows).toHaveLength(KEYS);
        const values = new Set(rows.map((r) => r.slice(r.indexOf(',') + 1)));
        expect([...values]).toEqual([users[later]]);
      }
    },
    1_800_000,
  );
});
