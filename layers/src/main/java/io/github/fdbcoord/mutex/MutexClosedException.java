package io.github.fdbcoord.mutex;

/** The mutex service was closed while the operation was waiting. */
public final class MutexClosedException extends MutexException {
  public MutexClosedException(String mutex) {
    super(mutex, "the mutex service was closed while waiting on mutex '" + mutex + "'");
  }

  @Override
  public Kind kind() {
    return Kind.CLOSED;
  }
}
