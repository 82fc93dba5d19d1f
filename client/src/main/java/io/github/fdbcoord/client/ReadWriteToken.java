package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.ReadWriteLockWire;

import java.util.Comparator;
import java.util.Objects;

/**
 * The token of one read-write lock grant: the versionstamp of the commit that made it, as the wire's 24 hex digits.
 * Its first 20 are the commit's {@link FencingToken} ({@code commit}); the last 4 the {@code order} that tells
 * apart the readers one commit let in. Tokens of one lock compare in grant order; a writer's {@code commit} is
 * greater than every earlier grant's, so it fences like a mutex token.
 */
public record ReadWriteToken(FencingToken commit, int order) implements Comparable<ReadWriteToken> {
  private static final Comparator<ReadWriteToken> ORDER =
      Comparator.comparing(ReadWriteToken::commit).thenComparingInt(ReadWriteToken::order);

  /** A token of {@code commit} and {@code order} (0 to 0xffff: two bytes on the wire). */
  public ReadWriteToken {
    Objects.requireNonNull(commit, "commit");
    if (order < 0 || order > 0xffff) {
      throw new IllegalArgumentException("a read-write lock token's order is 0 to 65535, got " + order);
    }
  }

  /** Parses the wire form: {@value ReadWriteLockWire#TOKEN_HEX_LENGTH} hex digits. */
  public static ReadWriteToken parse(String hex) {
    if (hex == null || hex.length() != ReadWriteLockWire.TOKEN_HEX_LENGTH) {
      throw new IllegalArgumentException("a read-write lock token is " + ReadWriteLockWire.TOKEN_HEX_LENGTH
          + " hex digits, got " + hex);
    }
    int split = 2 * FencingToken.LENGTH;
    try {
      return new ReadWriteToken(FencingToken.parse(hex.substring(0, split)),
          Integer.parseInt(hex.substring(split), 16));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a read-write lock token is " + ReadWriteLockWire.TOKEN_HEX_LENGTH
          + " hex digits, got " + hex, e);
    }
  }

  @Override
  public int compareTo(ReadWriteToken o) {
    return ORDER.compare(this, o);
  }

  /** Whether this grant came after {@code other}'s. */
  public boolean isNewerThan(ReadWriteToken other) {
    return compareTo(other) > 0;
  }

  /** The wire form, which sorts as the tokens do. */
  @Override
  public String toString() {
    return commit + String.format("%04x", order);
  }
}
