package io.github.fdbcoord.testsupport;

import io.github.fdbcoord.lease.GrantNotifier;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
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

  /**
   * Starts a thread that hints random owners {@code node/0 .. node/(owners-1)} of lock {@code name} to random nodes
   * (a recheck each, granting nothing) until the returned handle is closed.
   */
  public AutoCloseable forge(String name, int owners) {
    AtomicBoolean forging = new AtomicBoolean(true);
    List<String> ids = List.copyOf(nodes.keySet());
    Thread forger = new Thread(() -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      while (forging.get()) {
        String owner = ids.get(random.nextInt(ids.size())) + "/" + random.nextInt(owners);
        nodes.get(ids.get(random.nextInt(ids.size()))).test(name, owner);
        Thread.onSpinWait();
      }
    }, "forger");
    forger.start();
    return () -> {
      forging.set(false);
      forger.join();
    };
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
