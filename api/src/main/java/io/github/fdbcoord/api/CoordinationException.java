package io.github.fdbcoord.api;

/**
 * A request a coordination layer refuses, or could not complete for a reason it names: the base of
 * each layer's exception ({@code DirectoryServiceException}, {@code AllocatorException},
 * {@code InternerException}, {@code MutexException}). A layer's exception keeps its own, finer
 * {@code kind()}; {@link #failureKind()} is what that kind means across layers, so a caller that
 * maps failures to a protocol catches this one type and maps each {@link FailureKind} once.
 */
public abstract class CoordinationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  protected CoordinationException(String message) {
    super(message);
  }

  protected CoordinationException(String message, Throwable cause) {
    super(message, cause);
  }

  /** What this failure means, whichever layer raised it. */
  public abstract FailureKind failureKind();
}
