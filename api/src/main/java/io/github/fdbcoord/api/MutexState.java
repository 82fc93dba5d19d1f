package io.github.fdbcoord.api;

import java.util.List;
import java.util.Optional;

/** A consistent snapshot of one mutex: its owner record (empty when free) and its queue, head first. */
public record MutexState(String name, Optional<MutexOwner> owner, List<QueueEntry> queue) {
  public MutexState {
    queue = List.copyOf(queue);
  }

  public boolean isHeld() {
    return owner.isPresent();
  }
}
