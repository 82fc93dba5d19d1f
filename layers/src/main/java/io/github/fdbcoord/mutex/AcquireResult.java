package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import com.apple.foundationdb.tuple.Versionstamp;

import java.util.Optional;

/**
 * The outcome of {@link MutexService#tryAcquire}: either the caller holds the mutex (with the
 * grant's fencing token), or it waits in the queue at {@code position} (1 = next to be served)
 * under {@code ticket}, the versionstamp of its enqueue.
 */
public final class AcquireResult {
  private final FencingToken token;
  private final int position;
  private final Versionstamp ticket;

  private AcquireResult(FencingToken token, int position, Versionstamp ticket) {
    this.token = token;
    this.position = position;
    this.ticket = ticket;
  }

  static AcquireResult held(FencingToken token) {
    return new AcquireResult(token, 0, null);
  }

  static AcquireResult queued(int position, Versionstamp ticket) {
    return new AcquireResult(null, position, ticket);
  }

  public boolean isHeld() {
    return token != null;
  }

  /** The grant's token when held. */
  public Optional<FencingToken> token() {
    return Optional.ofNullable(token);
  }

  /** 1-based position in the queue when queued (1 = served next); 0 when held. */
  public int position() {
    return position;
  }

  /** The versionstamp of the enqueue when queued. */
  public Optional<Versionstamp> ticket() {
    return Optional.ofNullable(ticket);
  }

  @Override
  public String toString() {
    return isHeld() ? "held(" + token + ")" : "queued(position " + position + ", ticket " + ticket + ")";
  }
}
