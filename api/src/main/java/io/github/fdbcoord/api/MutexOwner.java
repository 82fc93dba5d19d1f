package io.github.fdbcoord.api;

import java.util.Objects;

/**
 * The owner record of a held mutex: who holds it, the token of the grant, and how many heartbeats
 * the owner has sent since the grant. The reaper judges liveness by this record changing.
 */
public record MutexOwner(String owner, FencingToken token, long heartbeats) {
  public MutexOwner {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(token, "token");
  }
}
