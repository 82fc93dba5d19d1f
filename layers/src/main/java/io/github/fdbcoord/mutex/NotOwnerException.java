package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.MutexOwner;

/**
 * Release or heartbeat by a caller that does not own the mutex: another owner holds it, or the
 * caller's own grant (its fencing token) was ended and the caller holds a later one or none.
 */
public final class NotOwnerException extends MutexException {
  private final String caller;
  private final MutexOwner current;

  public NotOwnerException(String mutex, String caller, MutexOwner current) {
    super(Kind.NOT_OWNER, mutex, "'" + caller + "' does not own mutex '" + mutex + "': it is held by '" + current.owner()
        + "' under fencing token " + current.token());
    this.caller = caller;
    this.current = current;
  }

  public NotOwnerException(String mutex, String caller, FencingToken callerToken, MutexOwner current) {
    super(Kind.NOT_OWNER, mutex, "the grant " + callerToken + " of '" + caller + "' on mutex '" + mutex + "' has ended: it is held by '"
        + current.owner() + "' under fencing token " + current.token());
    this.caller = caller;
    this.current = current;
  }

  /** Who asked. */
  public String caller() {
    return caller;
  }

  /** The owner record at the time of the refusal. */
  public MutexOwner current() {
    return current;
  }
}
