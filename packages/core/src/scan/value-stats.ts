/**
 * Value statistics of a data file (`_VALUE_STATS`) seen through the read schema. Stats columns
 * follow the file's own schema (`_SCHEMA_ID`) or `_VALUE_STATS_COLS`; they are mapped to the read
 * schema by field id (docs/format.md, "Manifest entries and statistics" and "Schema evolution on
 * read") so a renamed column is never matched by name; a column whose type changed keeps its stats
 * only when the cast leaves every value as it was (`statsSurviveCast`).
 */
import { deserializeBinaryRow, type DataField, type DataFileMeta, type TableSchema } from '@tidemark/format';
import { statsSurviveCast } from '../cast/cast-rules.js';
import { statsFromRows, type PredicateStats } from '../predicate.js';

/** Maps file stats to read-schema stats; one instance per read schema. */
export class ValueStatsEvolution {
  private readonly mappings = new Map<string, { types: DataField['type'][]; index: (number | undefined)[] } | null>();

  constructor(private readonly readFields: readonly DataField[]) {}

  /**
   * Stats of `file` keyed by read-schema column names, or null when they cannot be decoded
   * (then no pruning happens).
   */
  stats(file: DataFileMeta, fileSchema: TableSchema): PredicateStats | null {
    const cols = file.valueStatsCols;
    const key = `${fileSchema.id}|${cols === null ? '*' : cols.join('\u0000')}`;
    let mapping = this.mappings.get(key);
    if (mapping === undefined) {
      mapping = this.buildMapping(fileSchema, cols);
      this.mappings.set(key, mapping);
    }
    if (mapping === null) return null;
    let mins: unknown[];
    let maxs: unknown[];
    try {
      mins = deserializeBinaryRow(file.valueStats.minValues, mapping.types);
      maxs = deserializeBinaryRow(file.valueStats.maxValues, mapping.types);
    } catch {
      return null;
    }
    const nulls = file.valueStats.nullCounts;
    const pick = <T>(row: readonly T[] | null): (T | undefined)[] | null =>
      row === null ? null : mapping.index.map((i) => (i === undefined ? undefined : row[i]));
    return statsFromRows(
      this.readFields.map((f) => f.name),
      pick(mins),
      pick(maxs),
      pick(nulls),
      file.rowCount,
    );
  }

  private buildMapping(
    fileSchema: TableSchema,
    cols: readonly string[] | null,
  ): { types: DataField['type'][]; index: (number | undefined)[] } | null {
    const statsFields: DataField[] = [];
    if (cols === null) statsFields.push(...fileSchema.fields);
    else {
      for (const name of cols) {
        const f = fileSchema.fields.find((x) => x.name === name);
        if (!f) return null;
        statsFields.push(f);
      }
    }
    // Stats of a column whose type changed are unknown unless every value survives the cast as it was.
    const index = this.readFields.map((rf) => {
      const i = statsFields.findIndex((sf) => sf.id === rf.id);
      return i < 0 || !statsSurviveCast(statsFields[i]!.type, rf.type) ? undefined : i;
    });
    return { types: statsFields.map((f) => f.type), index };
  }
}
