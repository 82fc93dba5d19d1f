package io.github.fdbcoord.api;

/**
 * What a refused or failed coordination request means, shared by every layer: each layer's own
 * exception kind (a mutex's {@code NOT_OWNER}, an interner's {@code TIMEOUT}, ...) is one of these,
 * so that a protocol maps each meaning to its status once (the service's failure codes and reasons
 * are in docs/vertx.md).
 */
public enum FailureKind {
  /** The request itself is invalid (bad name, malformed id, batch or transaction too large). Retrying cannot help. */
  BAD_REQUEST,
  /** The named thing (directory, interner namespace) does not exist. */
  NOT_FOUND,
  /** The directory to create, or the destination of a move, already exists. */
  ALREADY_EXISTS,
  /** The directory exists but was created with another layer tag. */
  LAYER_MISMATCH,
  /** The transaction kept conflicting with others until a retry limit stopped it. Retrying later may succeed. */
  CONFLICT,
  /** The operation ran past its timeout (a transaction's, or an acquire's wait). Retrying later may succeed. */
  TIMED_OUT,
  /** An interner namespace found no sequence with ids left within its tries. */
  EXHAUSTED,
  /** Release or heartbeat of a mutex that has no owner. */
  NOT_HELD,
  /** Release or heartbeat by someone who is not the mutex's current owner (or of an older grant). */
  NOT_OWNER,
  /** The mutex's queue is full. */
  QUEUE_FULL,
  /**
   * A hand-over named a successor that does not wait in the mutex's queue (an election's candidate that is not
   * campaigning): nothing changed, the holder keeps its grant. Retrying once the successor waits may succeed.
   */
  NOT_QUEUED,
  /** The layer's service was closed while the operation waited. */
  CLOSED,
  /** The store failed, or holds data this version cannot use. */
  UNAVAILABLE,
  /**
   * The store did not answer within the request's time (it is stopped, unreachable or recovering).
   * The request may still take effect once the store answers, except an acquire: that one never
   * becomes a grant. Retrying later may succeed.
   */
  STORE_UNAVAILABLE
}
