package io.github.fdbcoord.interner;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.directory.MismatchedLayerException;
import com.apple.foundationdb.directory.NoSuchDirectoryException;
import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.fdb.FdbErrors;


/**
 * The one exception type the interner fails its futures with. {@link #kind()} says what went wrong
 * in terms a caller (or the Vert.x/HTTP side) can act on; {@link #fdbCode()} keeps FoundationDB's
 * error code when the store is the cause.
 */
public final class InternerException extends CoordinationException {

  /** What kind of failure this is; each maps to one failure code on the event bus / HTTP. */
  public enum Kind {
    /** The request itself is wrong (null or too-long string, malformed id, bad namespace name, batch too large). Retrying will not help. */
    BAD_REQUEST(FailureKind.BAD_REQUEST),
    /** The namespace does not exist (or was removed while this handle was in use). */
    NOT_FOUND(FailureKind.NOT_FOUND),
    /** The transaction kept conflicting with others until a retry limit stopped it. Retrying later may succeed. */
    CONFLICT(FailureKind.CONFLICT),
    /** The transaction ran past its timeout. Retrying later may succeed. */
    TIMEOUT(FailureKind.TIMED_OUT),
    /** No non-exhausted sequence was found within the configured number of random tries. */
    EXHAUSTED(FailureKind.EXHAUSTED),
    /** The store failed for any other reason. */
    STORE_FAILURE(FailureKind.UNAVAILABLE);

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
  private final int fdbCode;

  public InternerException(Kind kind, String message) {
    this(kind, message, -1, null);
  }

  public InternerException(Kind kind, String message, int fdbCode, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.fdbCode = fdbCode;
  }

  public Kind kind() {
    return kind;
  }

  @Override
  public FailureKind failureKind() {
    return kind.failureKind();
  }

  /** FoundationDB's error code behind this failure, or -1 when the store did not report one. */
  public int fdbCode() {
    return fdbCode;
  }

  static InternerException badRequest(String message) {
    return new InternerException(Kind.BAD_REQUEST, message);
  }

  /** {@code t} as an InternerException: itself when it already is one, otherwise classified by its cause. */
  public static InternerException from(Throwable t) {
    Throwable cause = FdbErrors.unwrap(t);
    if (cause instanceof InternerException) {
      return (InternerException) cause;
    }
    if (cause instanceof FDBException) {
      int code = ((FDBException) cause).getCode();
      return new InternerException(kindOf(code), "store error " + code + ": " + cause.getMessage(), code, cause);
    }
    if (cause instanceof NoSuchDirectoryException) {
      return new InternerException(Kind.NOT_FOUND, cause.getMessage(), -1, cause);
    }
    if (cause instanceof MismatchedLayerException) {
      return new InternerException(Kind.BAD_REQUEST,
          "the directory exists but is not an interner namespace: " + cause.getMessage(), -1, cause);
    }
    if (cause instanceof IllegalArgumentException) {
      return new InternerException(Kind.BAD_REQUEST, String.valueOf(cause.getMessage()), -1, cause);
    }
    return new InternerException(Kind.STORE_FAILURE, String.valueOf(cause), -1, cause);
  }

  static Kind kindOf(int code) {
    switch (code) {
      case FdbErrors.TRANSACTION_TIMED_OUT:
      case FdbErrors.TIMED_OUT:
        return Kind.TIMEOUT;
      case FdbErrors.TRANSACTION_TOO_LARGE:
      case FdbErrors.KEY_TOO_LARGE:
      case FdbErrors.VALUE_TOO_LARGE:
        return Kind.BAD_REQUEST;
      default:
        // A retryable code that escaped the retry loop means a retry limit stopped it.
        return FdbErrors.isRetryable(code) ? Kind.CONFLICT : Kind.STORE_FAILURE;
    }
  }
}
