package io.github.fdbcoord.api;

import java.util.Objects;

/**
 * One waiter in a mutex's queue. {@code ticket} is the versionstamp of the commit that enqueued it;
 * the queue is served in ticket order.
 */
public record QueueEntry(String owner, FencingToken ticket) {
  public QueueEntry {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(ticket, "ticket");
  }
}
