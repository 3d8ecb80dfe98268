/**
 * Expected rows of the Java-written fixture tables, as listed in
 * `../shared/fixtures/paimon/README.md`, shared by the suites that read them (core API and CLI).
 */
import type * as arrow from 'apache-arrow';

/** One row of `pk_table_scan_and_read_mor`: `f0` STRING, `f1` INT, `f2` INT, `f3` DOUBLE. */
export type PkMorRow = [string, number, number, number];

/** The long `f0` value of the fixture tables. */
export const TWO_ROADS = 'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.';

/**
 * The rows of the pk-mor/pk-dv data script by key (one value each wherever it stands in a listing:
 * the listings below differ in which keys they hold, not in a key's values).
 */
const ROW = {
  alex: ['Alex', 10, 0, 16.1],
  alice: ['Alice', 10, 1, 19.1],
  bob: ['Bob', 10, 0, 12.1],
  david: ['David', 10, 0, 17.1],
  emily: ['Emily', 10, 0, 13.1],
  lucy: ['Lucy', 20, 1, 14.1],
  marco: ['Marco', 10, 0, 21.1],
  marco2: ['Marco2', 10, 0, 31.1],
  paul: ['Paul', 20, 1, 18.1],
  skye: ['Skye', 10, 0, 21.0],
  skye2: ['Skye2', 10, 0, 31.0],
  twoRoads: [TWO_ROADS, 10, 1, 11.0],
} satisfies Record<string, PkMorRow>;

/** pk-mor, latest snapshot (5), in README order. */
export const PK_MOR_LATEST: PkMorRow[] = [
  ROW.alice,
  ROW.bob,
  ROW.david,
  ROW.emily,
  ROW.lucy,
  ROW.marco,
  ROW.marco2,
  ROW.paul,
  ROW.skye,
  ROW.skye2,
  ROW.twoRoads,
];

/** pk-mor as of snapshot 2, in README order. */
export const PK_MOR_SNAPSHOT_2: PkMorRow[] = [ROW.alice, ROW.twoRoads, ROW.alex, ROW.bob, ROW.david, ROW.emily, ROW.lucy, ROW.paul];

/** pk-dv, latest snapshot (6): level-0 files of snapshots 5/6 are not visible to its batch reads. */
export const PK_DV_LATEST: PkMorRow[] = [ROW.alex, ROW.alice, ROW.bob, ROW.david, ROW.emily, ROW.lucy, ROW.paul, ROW.twoRoads];

/** Rows in one order (by their JSON), to compare a read with a fixture's expected rows. */
export function sortedRows(rows: readonly unknown[][]): unknown[][] {
  return [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** The rows of `t` as arrays of cell values (null for a missing one), in the order of {@link sortedRows}. */
export function sortedTableRows(t: arrow.Table): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < t.numRows; i++) out.push(t.schema.fields.map((_, c) => t.getChildAt(c)!.get(i) ?? null));
  return sortedRows(out);
}
