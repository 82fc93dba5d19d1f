package io.github.fdbcoord.embedded.engine;

import java.util.List;
import java.util.TreeMap;

/** What a transaction hands over at commit. Filled by the transaction, read by the engine only. */
public final class CommitRequest {
  /** The transaction's read version (unset for a read-only commit). */
  public long readVersion;
  /** Flattened [begin, end) pairs. */
  public List<byte[]> readConflicts;
  /** Flattened [begin, end) pairs. */
  public List<byte[]> writeConflicts;
  /** Cleared ranges, begin to end, non-overlapping; null when none. */
  public TreeMap<byte[], byte[]> clearedRanges;
  /** Point writes by key; null when none. */
  public TreeMap<byte[], PendingWrite> writes;
  /** SET_VERSIONSTAMPED_KEY operands with their values, in the order they were made; null when none. */
  public List<StampedKey> stampedKeys;
  /**
   * The ranges cleared after the first versionstamped key, flattened [begin, end) pairs in the order they were
   * cleared; null when none. FoundationDB applies a transaction's mutations in order with the stamp filled in, so a
   * range cleared after a versionstamped key removes it when the range covers the key as stamped (and only then).
   */
  public List<byte[]> clearsAfterStamps;

  /**
   * One SET_VERSIONSTAMPED_KEY: the key template (offset suffix included), the value, and how many pairs of
   * {@link #clearsAfterStamps} had been cleared before it (the later ones apply to it).
   */
  public record StampedKey(byte[] template, byte[] value, int clearsBefore) {}
  /**
   * Whether CAUSAL_WRITE_RISKY was set: otherwise FoundationDB's client makes a commit whose reads do
   * not intersect its writes self-conflicting, so even a blind write can be too old (1007).
   */
  public boolean causalWriteRisky;
  /**
   * Whether the read version was taken by the commit itself (the transaction never read): FoundationDB
   * takes it then, after any throttling, so such a commit is never too old.
   */
  public boolean readVersionAtCommit;
  /** Watches to register once the commit is applied; null when none. */
  public List<Watches.Watch> watches;

  /** Whether there is nothing to resolve or log: FoundationDB answers such a commit without the cluster. */
  boolean readOnly() {
    return writeConflicts.isEmpty() && writes == null && clearedRanges == null && stampedKeys == null;
  }
}
