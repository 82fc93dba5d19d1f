package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.tuple.Versionstamp;

import java.util.Objects;

/**
 * One grant of a read-write lock: {@code owner} holds lock {@code lock} in {@code mode}.
 *
 * @param token the fencing token: the versionstamp of the commit that made the grant (its user
 *     version tells apart the grants one commit made). Tokens of one lock strictly increase with
 *     every grant, and a downgrade makes a new grant with a new token.
 */
public record ReadWriteGrant(String lock, String owner, LockMode mode, Versionstamp token) {
  public ReadWriteGrant {
    Objects.requireNonNull(lock, "lock");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(token, "token");
    if (!token.isComplete()) {
      throw new IllegalArgumentException("a grant's token must be a complete versionstamp");
    }
  }
}
