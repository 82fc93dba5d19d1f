package io.github.fdbcoord.directory;

import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;

import java.util.List;
import java.util.Objects;

/**
 * A directory request the service refuses. Each carries a {@link Kind} for mapping onto protocol
 * errors and the path it concerns.
 *
 * <p>Failures of the store itself are deliberately not wrapped: they stay
 * {@link com.apple.foundationdb.FDBException}s, so that a caller's own retry loop still retries
 * conflicts (classify them with {@code io.github.fdbcoord.fdb.FdbErrors}).
 */
public class DirectoryServiceException extends CoordinationException {

  /** What went wrong, in terms a protocol can map (suggested HTTP status in brackets). */
  public enum Kind {
    /** The request is malformed: empty path, element not a string, bad layer, bad move. [400] */
    BAD_REQUEST(FailureKind.BAD_REQUEST),
    /** The directory (or the parent a move needs) does not exist. [404] */
    NOT_FOUND(FailureKind.NOT_FOUND),
    /** The directory to create, or the destination of a move, already exists. [409] */
    ALREADY_EXISTS(FailureKind.ALREADY_EXISTS),
    /** The directory exists but was created with another layer tag. [409] */
    LAYER_MISMATCH(FailureKind.LAYER_MISMATCH),
    /**
     * The stored directory metadata was written by an incompatible directory layer version: to
     * this service the store is unusable. [503]
     */
    INCOMPATIBLE_VERSION(FailureKind.UNAVAILABLE);

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
  private final List<String> path;

  public DirectoryServiceException(Kind kind, List<String> path, String message) {
    this(kind, path, message, null);
  }

  public DirectoryServiceException(Kind kind, List<String> path, String message, Throwable cause) {
    super(message, cause);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.path = path == null ? null : List.copyOf(path);
  }

  public Kind kind() {
    return kind;
  }

  @Override
  public FailureKind failureKind() {
    return kind.failureKind();
  }

  /** The path the error is about (for a move, the one that failed), or null when there is none. */
  public List<String> path() {
    return path;
  }
}
