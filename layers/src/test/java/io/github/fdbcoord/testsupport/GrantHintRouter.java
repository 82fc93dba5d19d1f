package io.github.fdbcoord.testsupport;

import io.github.fdbcoord.lease.GrantNotifier;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;

/**
 * Stands for the event bus between processes in the grant-hint tests: services stand for processes, owners are
 * {@code node/n}, and the notifier records each hint, then (while delivering) hands it to the owner's node.
 */
public final class GrantHintRouter {
  /** One hint sent. */
  public record Hint(String name, String owner) {}

  /** Whether hints reach their node; when false they are recorded and lost. */
  public final AtomicBoolean deliver = new AtomicBoolean(true);
  /** Every hint sent, in order. */
  public final List<Hint> sent = new CopyOnWriteArrayList<>();
  private final Map<String, BiPredicate<String, String>> nodes = new ConcurrentHashMap<>();

  /** Node {@code id}'s recheck ({@code service::recheck}). */
  public void node(String id, BiPredicate<String, String> recheck) {
    nodes.put(id, recheck);
  }

  /** The notifier to open every node's service with. */
  public GrantNotifier notifier() {
    return (name, owner) -> {
      sent.add(new Hint(name, owner));
      if (deliver.get()) {
        nodes.get(owner.substring(0, owner.indexOf('/'))).test(name, owner);
      }
    };
  }
}
