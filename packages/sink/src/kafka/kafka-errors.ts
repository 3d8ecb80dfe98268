/** Errors of the Kafka source. */
import { SourceError } from '../errors.js';

/** A Kafka setting (URI, flag, environment variable) that cannot be used; names it. */
export class KafkaSettingsError extends SourceError {}

/** A topic of the source does not exist on the cluster. */
export class KafkaTopicMissingError extends SourceError {}

/**
 * The offset to resume from no longer exists (retention deleted it) or lies beyond the end of the
 * partition (the topic was recreated): reading on would silently skip or re-read messages.
 */
export class KafkaOffsetOutOfRangeError extends SourceError {
  constructor(
    message: string,
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly low: number,
    readonly high: number,
  ) {
    super(message);
  }
}

/**
 * A request to the cluster failed in a way tidemark cannot explain (a non-retriable protocol
 * error, a malformed response): reported as unexpected. {@link KafkaUnavailableError}, a subclass,
 * is the common case of a cluster that stayed unreachable or kept failing through the retries.
 */
export class KafkaRequestError extends SourceError {
  override readonly userError: boolean = false;
}

/**
 * The brokers stayed unreachable (refused, timed out, TLS handshake failed, name not resolved) or
 * kept answering with retriable errors (no leader, coordinator moving) through every retry. The
 * message names the request, the brokers, the last cause and what to check; the operator can act
 * on it, so the CLI prints it as one line (exit 1) instead of an unexpected error.
 */
export class KafkaUnavailableError extends KafkaRequestError {
  override readonly userError: boolean = true;

  constructor(
    message: string,
    /** The bootstrap brokers the client was given. */
    readonly brokers: readonly string[],
    /** Attempts made before giving up. */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
