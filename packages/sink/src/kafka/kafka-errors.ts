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

/** A request to the cluster failed after its retries (broker down, leader lost, refused). */
export class KafkaRequestError extends SourceError {
  override readonly userError: boolean = false;
}
