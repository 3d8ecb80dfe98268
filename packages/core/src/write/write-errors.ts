import { TidemarkUserError } from '../errors.js';

/** A feature that tidemark does not implement yet (e.g. writing primary-key tables). */
export class NotSupportedError extends TidemarkUserError {}

/**
 * Input rejected by a table writer before anything was written: unknown column, NULL in a NOT NULL
 * column, a value of the wrong type or out of range. Names the column and, when known, the row.
 */
export class WriteValidationError extends TidemarkUserError {
  /** The problem without the column and row prefix, for callers that name the place their own way. */
  readonly detail: string;

  constructor(
    /** Column (dotted path for nested fields), or undefined for input-level problems. */
    readonly column: string | undefined,
    /** 0-based index of the row in the write() input, when the problem is row-specific. */
    readonly rowIndex: number | undefined,
    detail: string,
  ) {
    const where = [column !== undefined ? `column '${column}'` : undefined, rowIndex !== undefined ? `row ${rowIndex}` : undefined]
      .filter((x) => x !== undefined)
      .join(', ');
    super(`${where ? where + ': ' : ''}${detail}`);
    this.detail = detail;
  }
}
