/**
 * Error classes of `@tidemark/format`. Every error thrown by this package extends {@link FormatError},
 * so callers can tell format problems from I/O problems with one `instanceof` check.
 */

/**
 * Base class of every error raised by the format package. `userError` is false: bytes that do not
 * decode, or values that do not fit their type inside the library, are not the user's to fix at
 * the terminal; front ends report them as unexpected (with a stack on request).
 */
export class FormatError extends Error {
  /** Whether the person running the command can fix the cause (see {@link SchemaError}). */
  readonly userError: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A schema or type definition is invalid or unsupported (bad type string, unknown field, ...): a user error. */
export class SchemaError extends FormatError {
  override readonly userError: boolean = true;
}

/**
 * A file's bytes do not match the format it should have; carries the path of the offending file.
 * A user error: the message names the one damaged file, which the user can restore or roll back
 * past (unlike a table whose metadata contradicts itself, `CorruptTableError` in core).
 */
export class CorruptFileError extends FormatError {
  override readonly userError: boolean = true;
  /** Path of the file that could not be decoded. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`${path}: ${message}`, options);
    this.path = path;
  }
}
