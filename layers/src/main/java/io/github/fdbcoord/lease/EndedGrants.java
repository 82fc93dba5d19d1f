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
 * space + token         = ()                  the grant {@code token} was released by its owner
 *                        = (successor:vstamp)  ... or downgraded, to the grant {@code successor}
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

  /** How an owner ended a grant: released (no successor) or downgraded to the grant {@code successor}. */
  public record Ended(Versionstamp successor) {
    public boolean released() {
      return successor == null;
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

  public byte[] packReleasedValue() {
    return Tuple.from().pack();
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the successor is the commit's versionstamp with {@code userVersion}. */
  public byte[] packDowngradedValueForCommit(int userVersion) {
    return Versionstamps.packValue(Tuple.from(Versionstamp.incomplete(userVersion)));
  }

  public byte[] packValue(Ended ended) {
    return ended.released() ? packReleasedValue() : Tuple.from(ended.successor()).pack();
  }

  public Ended unpackValue(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Ended(t.isEmpty() ? null : t.getVersionstamp(0));
  }

  /** The first key of the records older than {@code version}: every record below it is of an earlier commit. */
  byte[] packTrimEnd(long version) {
    return ByteArrayUtil.join(space.getKey(), ByteBuffer.allocate(8).putLong(version).array());
  }

  // ================================================================ queries

  /** Records that the owner released grant {@code token} in {@code tr}, and trims the old records. */
  public CompletableFuture<Void> recordRelease(Transaction tr, byte[] token) {
    tr.set(packKey(token), packReleasedValue());
    return trim(tr);
  }

  /** Records that grant {@code token} became grant (this commit, {@code userVersion}) in {@code tr}; trims. */
  public CompletableFuture<Void> recordDowngrade(Transaction tr, byte[] token, int userVersion) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packKey(token), packDowngradedValueForCommit(userVersion));
    return trim(tr);
  }

  /** How grant {@code token} was ended by its owner, or null when no record says so. */
  public CompletableFuture<Ended> read(ReadTransaction tr, byte[] token) {
    return tr.get(packKey(token)).thenApply(v -> v == null ? null : unpackValue(v));
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
