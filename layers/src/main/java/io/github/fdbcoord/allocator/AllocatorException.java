package io.github.fdbcoord.allocator;

import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;

import java.util.Objects;

/**
 * A request the allocator layer refuses. Failures of the store itself are not wrapped: they
 * surface as {@link com.apple.foundationdb.FDBException} so that a caller's retry loop still sees
 * retryable codes (classify them with {@code io.github.fdbcoord.fdb.FdbErrors}).
 */
public class AllocatorException extends CoordinationException {
  /** What kind of refusal this is, for mapping onto protocol errors (HTTP status, reply codes). */
  public enum Kind {
    /** The request itself is invalid (bad allocator name, bad option); retrying cannot help. */
    BAD_REQUEST(FailureKind.BAD_REQUEST);

    private final FailureKind failureKind;

    Kind(FailureKind failureKind) {
      this.failureKind = failureKind;
    }

    /** What this kind means across layers. */
    public FailureKind failureKind() {
      return failureKind;
    }
  }

  private final Kind kind;

  public AllocatorException(Kind kind, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
  }

  public Kind kind() {
    return kind;
  }

  @Override
  public FailureKind failureKind() {
    return kind.failureKind();
  }

  static AllocatorException badRequest(String message) {
    return new AllocatorException(Kind.BAD_REQUEST, message);
  }
}
