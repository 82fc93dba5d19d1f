package io.github.fdbcoord.mutex;

/** Release or heartbeat of a mutex that nobody holds. */
public final class MutexNotHeldException extends MutexException {
  private final String caller;

  public MutexNotHeldException(String mutex, String caller) {
    super(Kind.NOT_HELD, mutex, "mutex '" + mutex + "' is not held, so '" + caller + "' cannot release or heartbeat it");
    this.caller = caller;
  }

  /** Who asked. */
  public String caller() {
    return caller;
  }
}
