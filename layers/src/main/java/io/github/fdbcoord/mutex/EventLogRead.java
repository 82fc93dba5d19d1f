package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.LockEvent;

import java.util.List;

/**
 * What a read of a mutex's event log since a position found.
 *
 * @param events the events newer than the position, oldest first (at most the limit asked for)
 * @param complete false when the log may no longer hold every event since the position: the position
 *     is older than the event retention (older events may have been trimmed), or newer than the
 *     store's current version (a position of another store)
 */
public record EventLogRead(List<LockEvent> events, boolean complete) {
  public EventLogRead {
    events = List.copyOf(events);
  }
}
