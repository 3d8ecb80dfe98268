import { describe, expect, it } from 'vitest';
import type { DataType } from '@tidemark/format';
import { evaluate, or, type Predicate } from '../src/predicate.js';
import { seededRandom } from '../../../test/support/seeded-random.mjs';

// A long IN list is evaluated through a hash set; SQL defines `x IN (a, b, …)` as
// `x = a OR x = b OR …`, which is the model here (three-valued: a NULL in the list makes a miss UNKNOWN).
const INT = { root: 'INT', nullable: true } as const;
const BIGINT = { root: 'BIGINT', nullable: true } as const;
const DOUBLE = { root: 'DOUBLE', nullable: true } as const;
const STRING = { root: 'VARCHAR', length: 2147483647, nullable: true } as const;
const BYTES = { root: 'VARBINARY', length: 2147483647, nullable: true } as const;
const DECIMAL = { root: 'DECIMAL', precision: 20, scale: 4, nullable: true } as const;
const TS = { root: 'TIMESTAMP', precision: 9, nullable: true } as const;

type Gen = (r: () => number) => unknown;
const kinds: Array<{ name: string; type: DataType; gen: Gen }> = [
  { name: 'INT', type: INT, gen: (r) => Math.floor(r() * 40) - 20 },
  // bigint column values against number literals (and the reverse) compare by value
  { name: 'BIGINT', type: BIGINT, gen: (r) => (r() < 0.5 ? BigInt(Math.floor(r() * 40) - 20) : Math.floor(r() * 40) - 20) },
  {
    name: 'DOUBLE',
    type: DOUBLE,
    gen: (r) => [0, -0, NaN, Infinity, -Infinity, 1.5, -1.5, 2, 0.1, 1e21, 3][Math.floor(r() * 11)],
  },
  { name: 'STRING', type: STRING, gen: (r) => ['', 'a', 'b', 'ab', 'é', '\u{1F600}', 'A'][Math.floor(r() * 7)] },
  { name: 'BYTES', type: BYTES, gen: (r) => Uint8Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * 3)) },
  {
    name: 'DECIMAL',
    type: DECIMAL,
    // the same value at several scales: 1.5 = 1.50 = 1.500
    gen: (r) => {
      const scale = Math.floor(r() * 4);
      const base = BigInt(Math.floor(r() * 9) - 4) * 10n ** BigInt(scale);
      return { unscaled: base + (r() < 0.3 ? 1n : 0n), scale };
    },
  },
  { name: 'TIMESTAMP', type: TS, gen: (r) => ({ millis: Math.floor(r() * 4) - 2, nanoOfMillis: Math.floor(r() * 3) * 1000 }) },
];

describe('IN with a long value list (hash set)', () => {
  for (const kind of kinds) {
    it(`${kind.name}: agrees with the OR of equalities, NULLs and NOT IN included`, () => {
      const random = seededRandom(kind.name.length * 7919);
      for (let trial = 0; trial < 300; trial++) {
        const values = Array.from({ length: 8 + Math.floor(random() * 12) }, () => (random() < 0.05 ? null : kind.gen(random)));
        const negated = random() < 0.3;
        const pred = { kind: 'in', column: 'c', type: kind.type, values, negated } as Predicate;
        const equalities = values.map((value) => ({ kind: 'compare', op: '=', column: 'c', type: kind.type, value }) as const);
        const model = (row: Record<string, unknown>): boolean | null => {
          const r = evaluate(or(...equalities), row);
          return negated && r !== null ? !r : r;
        };
        for (let k = 0; k < 20; k++) {
          const row = { c: random() < 0.05 ? null : kind.gen(random) };
          expect(evaluate(pred, row), `${String(row.c)} IN ${values.length} values`).toBe(model(row));
        }
      }
    });
  }
});
