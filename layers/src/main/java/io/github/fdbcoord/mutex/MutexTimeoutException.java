package io.github.fdbcoord.mutex;

import java.time.Duration;

/** Acquire did not get the mutex in time; the caller's queue entry has been removed. */
public final class MutexTimeoutException extends MutexException {
  private final String caller;
  private final Duration timeout;

  public MutexTimeoutException(String mutex, String caller, Duration timeout) {
    super(Kind.TIMED_OUT, mutex, "'" + caller + "' did not acquire mutex '" + mutex + "' within " + timeout.toMillis() + " ms and left its queue");
    this.caller = caller;
    this.timeout = timeout;
  }

  public String caller() {
    return caller;
  }

  public Duration timeout() {
    return timeout;
  }
}
