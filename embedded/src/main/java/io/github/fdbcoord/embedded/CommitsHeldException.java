package io.github.fdbcoord.embedded;

import com.apple.foundationdb.FDBException;

/**
 * A transaction that timed out or was cancelled while the engine held its commit back because the
 * disk is low on space ({@link EmbeddedOptions#minFreeSpaceBytes}): its error (1031 or 1025, as
 * FoundationDB gives) with the reason added. The commit was withdrawn: it certainly did not happen.
 */
public final class CommitsHeldException extends FDBException {
  private static final long serialVersionUID = 1L;

  private final String reason;

  public CommitsHeldException(FDBException error, String reason) {
    super(error.getMessage() + ": commits are held: " + reason, error.getCode());
    this.reason = reason;
  }

  /** Why commits were held (which directory, how much space it has, the reserve). */
  public String reason() {
    return reason;
  }
}
