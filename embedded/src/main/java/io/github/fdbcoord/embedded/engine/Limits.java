package io.github.fdbcoord.embedded.engine;

/** FoundationDB's size limits, as a transaction checks them before it commits. */
public final class Limits {
  /** Longest key outside the system keys. */
  public static final int KEY_SIZE_LIMIT = 10_000;
  /** Longest key in the system keys ({@code \xff...}). */
  public static final int SYSTEM_KEY_SIZE_LIMIT = 30_000;
  /** Longest value. */
  public static final int VALUE_SIZE_LIMIT = 100_000;
  /** Largest transaction (its writes and conflict ranges), and the most its size limit option may be. */
  public static final long TRANSACTION_SIZE_LIMIT = 10_000_000L;

  private Limits() {}

  /** The key size limit that applies to {@code key}. */
  public static int maxKeySize(byte[] key) {
    return key.length > 0 && key[0] == (byte) 0xff ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT;
  }
}
