package io.github.fdbcoord.embedded.client;

/**
 * The stored side of a range read's merge with the transaction's own writes ({@link MergedView}): the
 * rows storage holds at the read version, or what the transaction knows of them once storage can no
 * longer answer. One row at a time, in scan order, held in fields so that a step allocates nothing.
 */
abstract class StoredRows {
  /** The current row's key, once {@link #next()} returned true. */
  byte[] key;
  /** The current row's value, once {@link #next()} returned true. */
  byte[] value;
  /**
   * Set when the current row stands where the transaction's knowledge stops: taking it would need
   * storage, which no longer answers at the read version.
   */
  boolean unknown;

  /** Steps to the next row (past the current one, which the merge has taken); false at the end. */
  abstract boolean next();

  /**
   * The merge stopped at its limit on the row at {@code lastKey}; {@code more}: stored rows remain
   * beyond it.
   */
  void stoppedAt(byte[] lastKey, boolean more) {
  }

  /** The merge took every stored row of the range. */
  void exhausted() {
  }
}
