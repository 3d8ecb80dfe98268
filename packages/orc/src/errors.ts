/**
 * Error classes of `@tidemark/orc`. Every error thrown by this package extends {@link OrcError}, so
 * callers can tell ORC decoding problems from I/O problems with one `instanceof` check.
 */

/** Base class of every error raised by the ORC reader. */
export class OrcError extends Error {
  /** Whether the person running the command can fix the cause (see {@link CorruptOrcFileError}). */
  readonly userError: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The bytes are not a readable ORC file (bad magic, truncated tail, inconsistent streams, undecodable
 * run). Carries the path of the file; a user error because the message names the one damaged file.
 */
export class CorruptOrcFileError extends OrcError {
  override readonly userError: boolean = true;
  /** Path of the file that could not be decoded. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`${path}: ${message}`, options);
    this.path = path;
  }
}

/** A valid ORC file uses something this reader does not implement (LZO, encryption, an unknown type). */
export class UnsupportedOrcFeatureError extends OrcError {
  override readonly userError: boolean = true;
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`${path}: ${message}`, options);
    this.path = path;
  }
}

/**
 * Raised inside the decoders (which do not know the file); the reader rethrows it as
 * {@link CorruptOrcFileError} with the path, column and stripe.
 */
export class OrcDecodeError extends OrcError {}
