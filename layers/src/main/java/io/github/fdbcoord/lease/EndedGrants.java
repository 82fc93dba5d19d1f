package io.github.fdbcoord.lease;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.fdb.Versionstamps;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The grants their owners ended lately (a release, a downgrade), so that a retry of that call finds its own earlier
 * commit: a commit that reported {@code commit_unknown_result} may have succeeded, and its retry then finds the grant
 * gone, which, without this record, it cannot tell from an expiry. Part of a leased layer's schema, under its
 * subspace:
 *
 * <pre>
 * space + token         = (lock:str, owner:str)                    the grant {@code token} of {@code owner} on {@code lock} was released by it
 *                        = (lock:str, owner:str, successor:vstamp)  ... or downgraded, to the grant {@code successor}
 * </pre>
 *
 * <p>Keys sort by the token's commit version, so each owner-ended grant trims, with one range clear, the records
 * older than {@link #RETENTION_VERSIONS} (FoundationDB makes about a million versions a second: 100 s, far beyond
 * any retry loop). Nothing reads the records but those retries, each reading one key.
 */
public final class EndedGrants {
  /** How long a record lasts, in versions. */
  public static final long RETENTION_VERSIONS = 100_000_000L;
  /** A commit's versionstamp: its version (8 bytes) and batch order (2); a layer's tokens may add a user version. */
  private static final int MIN_TOKEN_LENGTH = 10;

  private final Subspace space;

  public EndedGrants(Subspace space) {
    this.space = space;
  }

  /** How {@code owner} ended its grant of {@code lock}: released (no successor) or downgraded to {@code successor}. */
  public record Ended(String lock, String owner, Versionstamp successor) {
    public boolean released() {
      return successor == null;
    }

    /** Whether this record is of {@code owner}'s grant of {@code lock} (a token names one grant, but a caller may
     * present another's). */
    public boolean of(String lock, String owner) {
      return this.lock.equals(lock) && this.owner.equals(owner);
    }
  }

  public byte[] packKey(byte[] token) {
    if (token.length < MIN_TOKEN_LENGTH) {
      throw new IllegalArgumentException("a grant's token is a versionstamp of at least " + MIN_TOKEN_LENGTH
          + " bytes, got " + token.length);
    }
    return ByteArrayUtil.join(space.getKey(), token);
  }

  public byte[] unpackKey(byte[] key) {
    byte[] prefix = space.getKey();
    if (key.length < prefix.length + MIN_TOKEN_LENGTH || !ByteArrayUtil.startsWith(key, prefix)) {
      throw new IllegalArgumentException("not a key of the ended grants: " + ByteArrayUtil.printable(key));
    }
    return Arrays.copyOfRange(key, prefix.length, key.length);
  }

  public byte[] packReleasedValue(String lock, String owner) {
    return Tuple.from(lock, owner).pack();
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the successor is the commit's versionstamp with {@code userVersion}. */
  public byte[] packDowngradedValueForCommit(String lock, String owner, int userVersion) {
    return Versionstamps.packValue(Tuple.from(lock, owner, Versionstamp.incomplete(userVersion)));
  }

  public byte[] packValue(Ended ended) {
    return ended.released() ? packReleasedValue(ended.lock(), ended.owner())
        : Tuple.from(ended.lock(), ended.owner(), ended.successor()).pack();
  }

  public Ended unpackValue(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Ended(t.getString(0), t.getString(1), t.size() > 2 ? t.getVersionstamp(2) : null);
  }

  /** The first key of the records older than {@code version}: every record below it is of an earlier commit. */
  byte[] packTrimEnd(long version) {
    return ByteArrayUtil.join(space.getKey(), ByteBuffer.allocate(8).putLong(version).array());
  }

  // ================================================================ queries

  /** Records that {@code owner} released its grant {@code token} of {@code lock} in {@code tr}; trims old records. */
  public CompletableFuture<Void> recordRelease(Transaction tr, String lock, String owner, byte[] token) {
    tr.set(packKey(token), packReleasedValue(lock, owner));
    return trim(tr);
  }

  /** Records that the grant {@code token} became grant (this commit, {@code userVersion}) in {@code tr}; trims. */
  public CompletableFuture<Void> recordDowngrade(Transaction tr, String lock, String owner, byte[] token,
      int userVersion) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packKey(token),
        packDowngradedValueForCommit(lock, owner, userVersion));
    return trim(tr);
  }

  /**
   * How {@code owner} ended its grant {@code token} of {@code lock}, or null when no record says so (the record of
   * another's grant under that token does not count).
   */
  public CompletableFuture<Ended> read(ReadTransaction tr, String lock, String owner, byte[] token) {
    return tr.get(packKey(token)).thenApply(v -> {
      Ended ended = v == null ? null : unpackValue(v);
      return ended != null && ended.of(lock, owner) ? ended : null;
    });
  }

  /** Clears the records older than the retention, measured from {@code tr}'s read version (known once it read). */
  private CompletableFuture<Void> trim(Transaction tr) {
    return tr.getReadVersion().thenAccept(readVersion -> {
      if (readVersion > RETENTION_VERSIONS) {
        tr.clear(space.getKey(), packTrimEnd(readVersion - RETENTION_VERSIONS));
      }
    });
  }
}
