import { typeToString, type DataType } from '@tidemark/format';
import { TidemarkUserError } from '../errors.js';

/**
 * A value of a data file written under an older column type cannot be read as the column's current
 * type, and Paimon's cast rule fails for it too (e.g. `'abc'` read as INT after STRING → INT).
 * Java fails the read the same way ("Failed to cast value for field ..."); change the column back
 * to a type that holds the value, or rewrite the file.
 */
export class CastValueError extends TidemarkUserError {
  constructor(
    /** The data file and column, e.g. `…/data-1.parquet: column 'v'`. */
    readonly where: string,
    /** The value as written (text, number or hex bytes). */
    readonly value: string,
    /** The type the file was written with. */
    readonly from: DataType,
    /** The column's current type. */
    readonly to: DataType,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${where}: cannot cast ${value} from ${typeToString(from)} to ${typeToString(to)} (${reason}); ` +
        `Paimon's cast fails for it too: alter the column to a type that holds it, or rewrite the file`,
      options,
    );
  }
}
