package io.github.fdbcoord.embedded.log;

import java.io.IOException;

/**
 * Tells a full disk from other I/O failures. The JDK reports the errno of a failed write only as the
 * message of its {@link java.io.IOException} ({@code strerror}: "No space left on device" for ENOSPC,
 * "Disk quota exceeded" for EDQUOT), so that message is all there is to go on.
 */
public final class OutOfSpace {
  private OutOfSpace() {}

  /** Whether {@code failure}, or one of its causes, is a write refused for lack of disk space or quota. */
  public static boolean is(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof LogStalledException) {
        return true;
      }
      String message = t.getMessage();
      if (t instanceof IOException && message != null
          && (message.contains("No space left on device") || message.contains("Disk quota exceeded"))) {
        return true;
      }
    }
    return false;
  }
}
