/**
 * Errors raised while planning and reading a table. They extend the core base classes of
 * `../errors.ts` so front ends treat them like every other core error.
 */
import { TidemarkError, TidemarkUserError } from '../errors.js';

/**
 * The table's metadata contradicts itself, e.g. a manifest DELETEs a file that no earlier
 * manifest of the snapshot ADDed. The message names the snapshot and the file.
 */
export class CorruptTableError extends TidemarkError {
  /**
   * False by default: a corrupt table is not the user's input, so front ends report it as
   * unexpected (with a stack on request). True for refusals that leave the table unchanged and tell
   * the user how to repair it (a commit refusing a damaged base snapshot).
   */
  override readonly userError: boolean;

  constructor(message: string, options?: { cause?: unknown; userError?: boolean }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.userError = options?.userError ?? false;
  }
}

/** The table uses a feature this reader does not implement (merge engine, file format …). */
export class UnsupportedTableFeatureError extends TidemarkUserError {}

/** A read option names a column the read schema does not have, or is otherwise invalid. */
export class InvalidReadOptionError extends TidemarkUserError {}
