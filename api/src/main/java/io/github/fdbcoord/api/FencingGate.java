package io.github.fdbcoord.api;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The fencing check for a resource outside FoundationDB (a file, a remote service) that the holders of one mutex
 * write to: a write is applied only when its fencing token is not older than the newest token the gate has admitted,
 * so a holder replaced while it was paused cannot write after its successor did. The same holder may write many
 * times under its token.
 *
 * <p>The check and the write must be one step, or a stale write admitted just before a newer holder's could land
 * after it: {@link #apply} runs the write under the gate's lock. A gate lives as long as the resource's state does; a
 * resource that outlives the process keeps the newest token with its data and starts a new gate from it.
 * Thread-safe.
 */
public final class FencingGate {
  private FencingToken newest;

  /** A gate that has admitted nothing yet. */
  public FencingGate() {}

  /** A gate that has already admitted {@code newest} (kept with the resource's data). */
  public FencingGate(FencingToken newest) {
    this.newest = Objects.requireNonNull(newest, "newest");
  }

  /**
   * Whether a write under {@code token} may be applied (the token is the newest admitted, or newer, and becomes
   * the newest). Use {@link #apply} when the write must not interleave with another.
   */
  public synchronized boolean admit(FencingToken token) {
    Objects.requireNonNull(token, "token");
    if (newest != null && newest.isNewerThan(token)) {
      return false;
    }
    newest = token;
    return true;
  }

  /**
   * Runs {@code write} when {@link #admit} admits {@code token}, under the gate's lock, and answers its result;
   * otherwise fails with a {@link StaleTokenException} ({@link FailureKind#NOT_OWNER}) naming both tokens,
   * and {@code write} does not run.
   */
  public synchronized <T> T apply(FencingToken token, Supplier<T> write) {
    if (!admit(token)) {
      throw new StaleTokenException(token, newest);
    }
    return write.get();
  }

  /** The newest token admitted, if any. */
  public synchronized Optional<FencingToken> newest() {
    return Optional.ofNullable(newest);
  }

  /** A write under a token older than one the gate already admitted. */
  public static final class StaleTokenException extends CoordinationException {
    private static final long serialVersionUID = 1L;
    private final transient FencingToken refused;
    private final transient FencingToken newest;

    StaleTokenException(FencingToken refused, FencingToken newest) {
      super("the write under fencing token " + refused + " was refused: a newer grant (" + newest
          + ") has already written");
      this.refused = refused;
      this.newest = newest;
    }

    public FencingToken refused() {
      return refused;
    }

    public FencingToken newest() {
      return newest;
    }

    @Override
    public FailureKind failureKind() {
      return FailureKind.NOT_OWNER;
    }
  }
}
