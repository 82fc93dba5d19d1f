package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.mutex.HandOffNotifier;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Hand-off hints between the nodes' lock services: when a node's commit hands a lock to an owner
 * {@code nodeId/sequence}, it tells node {@code nodeId}, which reads the lock again at once instead
 * of when its watch fires (a watch fires ~10 ms after the commit on a real FoundationDB; a message
 * and a read take about a millisecond). A hint to this node itself goes straight to its service.
 *
 * <p>The other way, a node that starts waiting for a lock held by another node's owner sends that node a demand,
 * {@code '\n' + lock name}: the holder ends its run of local grants and gives the lock back to the store's queue
 * at once instead of at its next read of the queue ({@link NodeLock}).
 *
 * <p>A hint is one event-bus message to the node's hint address, {@code owner + '\n' + lock name}
 * (an owner holds no line break, a lock name may), sent without a reply. Nothing depends on it: a
 * hint lost, or sent before the receiver listens or after it left, leaves the hand-off to the
 * watch; the receiver grants nothing on a hint, it only reads the committed owner record.
 * Internal to the cluster manager.
 */
public final class LockHints implements HandOffNotifier {
  static final String ADDRESS_PREFIX = "__fdbcoord.lock-hint.";

  private final String nodeId;
  private final AtomicBoolean listening = new AtomicBoolean();
  private volatile MutexService local;
  private volatile Consumer<String> demands = name -> {};
  private volatile EventBus bus;
  private volatile MessageConsumer<String> consumer;

  LockHints(String nodeId) {
    this.nodeId = nodeId;
  }

  /** Where node {@code nodeId} listens for the hints of its locks. */
  public static String address(String nodeId) {
    return ADDRESS_PREFIX + nodeId;
  }

  void attachLocal(MutexService service, Consumer<String> onDemand) {
    this.local = service;
    this.demands = onDemand;
  }

  /**
   * Sends hints over {@code eventBus} from now on and listens at this node's address (once; the
   * consumer's registration reaches the other nodes through the store, so the first hints to
   * this node may still be lost). Called once the node's clustered event bus runs.
   */
  void listen(EventBus eventBus) {
    if (!listening.compareAndSet(false, true)) {
      return;
    }
    this.bus = eventBus;
    consumer = eventBus.<String>consumer(address(nodeId), m -> {
      String body = m.body();
      int nl = body == null ? -1 : body.indexOf('\n');
      MutexService s = local;
      if (nl == 0) {
        demands.accept(body.substring(1));
      } else if (nl > 0 && s != null) {
        s.recheck(body.substring(nl + 1), body.substring(0, nl));
      }
    });
  }

  /** Stops listening (the node leaves; a hint sent meanwhile is dropped). */
  void stop() {
    MessageConsumer<String> c = consumer;
    if (c != null) {
      c.unregister();
    }
    bus = null;
  }

  /** Tells the node of {@code owner} (a lock owner {@code nodeId/sequence}) that this node waits for lock {@code name}. */
  void demand(String owner, String name) {
    int slash = owner.indexOf('/');
    EventBus b = bus;
    if (slash <= 0 || b == null || owner.substring(0, slash).equals(nodeId)) {
      return;
    }
    try {
      b.send(address(owner.substring(0, slash)), '\n' + name);
    } catch (RuntimeException e) {
      // The bus closed under a leaving node: the holder's own read of the queue finds this waiter.
    }
  }

  @Override
  public void handedOff(String name, String owner, FencingToken token) {
    int slash = owner.indexOf('/');
    if (slash <= 0) {
      return; // not a lock owner of this manager
    }
    String node = owner.substring(0, slash);
    if (node.equals(nodeId)) {
      MutexService s = local;
      if (s != null) {
        s.recheck(name, owner);
      }
      return;
    }
    EventBus b = bus;
    if (b != null) {
      try {
        b.send(address(node), owner + '\n' + name);
      } catch (RuntimeException e) {
        // The bus closed under a leaving node: the waiter's watch tells it.
      }
    }
  }
}
