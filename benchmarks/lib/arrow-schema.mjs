/**
 * The Arrow schema of a benchmark table's batches, derived from its Paimon columns so that each
 * table is declared once (`{ name, type }` with SQL types, `NOT NULL` for a required column).
 */
import * as arrow from 'apache-arrow';

/** The Arrow type of each SQL type the benchmark tables use. */
const ARROW_TYPES = {
  INT: () => new arrow.Int32(),
  BIGINT: () => new arrow.Int64(),
  DOUBLE: () => new arrow.Float64(),
  STRING: () => new arrow.Utf8(),
  'TIMESTAMP(3)': () => new arrow.TimestampMillisecond(),
};

/** The Arrow schema of `fields`; a type outside {@link ARROW_TYPES} is an error naming the column. */
export function arrowSchemaFor(fields) {
  return new arrow.Schema(
    fields.map(({ name, type }) => {
      const required = / NOT NULL$/.test(type);
      const base = type.replace(/ NOT NULL$/, '');
      const make = ARROW_TYPES[base];
      if (!make) throw new Error(`benchmark column ${name}: no Arrow type for ${type}`);
      return new arrow.Field(name, make(), !required);
    }),
  );
}
