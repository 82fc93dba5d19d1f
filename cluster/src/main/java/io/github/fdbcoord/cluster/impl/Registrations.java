package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;
import io.vertx.core.Completable;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.cluster.RegistrationUpdateEvent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The event-bus registrations of one node: the node's own (kept in memory too, to write them again
 * when the node re-joins after an eviction), their store-side updates, and the registration log
 * followed to tell the listener which addresses changed. Internal to the cluster manager.
 */
public final class Registrations {
  private static final Logger log = LoggerFactory.getLogger(Registrations.class);

  private final NodeState state;
  private final Map<String, Set<RegistrationInfo>> own = new ConcurrentHashMap<>();
  private volatile RegistrationListener listener;
  private volatile String nodeId;
  private volatile ClusterStore store;
  /** Changed only on the registration event thread. */
  private Versionstamp cursor;

  /** Registrations of a node in {@code state}; they reach the store once the node joined. */
  public Registrations(NodeState state) {
    this.state = state;
  }

  /** Who hears about changed addresses (Vert.x's event bus). */
  public void listener(RegistrationListener listener) {
    this.listener = listener;
  }

  /** A copy of this node's own registrations, to write at (re-)join. */
  Map<String, Set<RegistrationInfo>> own() {
    Map<String, Set<RegistrationInfo>> mine = new HashMap<>();
    own.forEach((address, infos) -> mine.put(address, Set.copyOf(infos)));
    return mine;
  }

  /** How many addresses this node registered. */
  int ownAddresses() {
    return own.size();
  }

  /** Writes {@code mine} with their log entries in {@code tr}. */
  static void writeAll(ClusterSchema schema, Transaction tr, Map<String, Set<RegistrationInfo>> mine) {
    Set<String> addresses = new LinkedHashSet<>();
    mine.forEach((address, infos) -> {
      for (RegistrationInfo r : infos) {
        schema.writeRegistration(tr, address, r);
        addresses.add(address);
      }
    });
    schema.appendRegistrationChanges(tr, addresses);
  }

  /** Starts following the registration log after {@code from}, the read version of the node's join. */
  public void start(String nodeId, ClusterStore store, NodeThreads threads, Versionstamp from) {
    this.nodeId = nodeId;
    this.store = store;
    threads.registrationEvents().execute(() -> cursor = from);
    new LogFollower<ClusterSchema.RegistrationChange>("registration", nodeId, state, store, threads, threads.registrationEvents(), () -> {
      Versionstamp after = cursor;
      return tr -> {
        CompletableFuture<Void> watch = store.schema().watchRegistrationGeneration(tr);
        return store.schema().readRegistrationChangesAfter(tr, after, store.executor())
            .thenApply(list -> new LogFollower.Poll<>(list, watch));
      };
    }, this::apply).start();
  }

  /** Adds a registration of this node (in the store too once joined). */
  public void add(String address, RegistrationInfo info, Completable<Void> promise) {
    own.computeIfAbsent(address, a -> ConcurrentHashMap.newKeySet()).add(info);
    if (!state.isActive()) {
      promise.succeed();
      return;
    }
    String me = nodeId;
    ClusterSchema schema = store.schema();
    ClusterStore.complete(store.whileNodeExists(me, tr -> {
      schema.writeRegistration(tr, address, info);
      schema.appendRegistrationChanges(tr, Set.of(address));
    }), promise);
  }

  /** Removes a registration of this node. */
  public void remove(String address, RegistrationInfo info, Completable<Void> promise) {
    own.computeIfPresent(address, (a, infos) -> {
      infos.remove(info);
      return infos.isEmpty() ? null : infos;
    });
    if (!state.isActive()) {
      promise.succeed();
      return;
    }
    ClusterSchema schema = store.schema();
    ClusterStore.complete(store.run(tr -> {
      schema.clearRegistration(tr, address, info);
      schema.appendRegistrationChanges(tr, Set.of(address));
      return CompletableFuture.completedFuture((Void) null);
    }), promise);
  }

  /**
   * On leave, before anything else: removes this node's registrations from the store (keeping them
   * in memory), so that senders stop choosing this node while it hands over its locks.
   */
  public CompletableFuture<Void> removeOwn() {
    Map<String, Set<RegistrationInfo>> mine = own();
    if (mine.isEmpty() || store == null) {
      return CompletableFuture.completedFuture(null);
    }
    ClusterSchema schema = store.schema();
    return store.run(tr -> {
      mine.forEach((address, infos) -> infos.forEach(info -> schema.clearRegistration(tr, address, info)));
      schema.appendRegistrationChanges(tr, mine.keySet());
      return CompletableFuture.completedFuture((Void) null);
    }).handle((v, e) -> null);
  }

  /**
   * When the node's Vert.x starts to close: removes from the store this node's registrations of
   * every address that a consumer of another node still serves, so senders turn to those while
   * this node can still answer what is on its way. The registrations of an address this node alone
   * serves stay until Vert.x unregisters the consumer: a verticle of another node may still message
   * it from its own stop method. One transaction reads the other registrations with conflict, so
   * two nodes closing at once never both withdraw the last two. Completes with the addresses withdrawn.
   */
  public CompletableFuture<Set<String>> withdrawServedElsewhere() {
    Map<String, Set<RegistrationInfo>> mine = own();
    if (mine.isEmpty() || store == null) {
      return CompletableFuture.completedFuture(Set.of());
    }
    String me = nodeId;
    ClusterSchema schema = store.schema();
    return store.run(tr -> {
      Map<String, CompletableFuture<List<RegistrationInfo>>> reads = new LinkedHashMap<>();
      mine.keySet().forEach(address -> reads.put(address, schema.readRegistrations(tr, address, store.executor())));
      return CompletableFuture.allOf(reads.values().toArray(new CompletableFuture<?>[0])).thenApply(v -> {
        Set<String> withdrawn = new LinkedHashSet<>();
        reads.forEach((address, read) -> {
          if (read.join().stream().anyMatch(r -> !r.nodeId().equals(me) && !r.localOnly())) {
            mine.get(address).forEach(info -> schema.clearRegistration(tr, address, info));
            withdrawn.add(address);
          }
        });
        if (!withdrawn.isEmpty()) {
          schema.appendRegistrationChanges(tr, withdrawn);
        }
        return withdrawn;
      });
    }).exceptionally(e -> {
      log.warn("node " + me + " could not withdraw its registrations before closing: " + FdbErrors.unwrap(e));
      return Set.of();
    });
  }

  /** The registrations of {@code address} on every node. */
  public void get(String address, Completable<List<RegistrationInfo>> promise) {
    if (!state.isActive()) {
      promise.fail(ClusterStore.notActive());
      return;
    }
    ClusterStore.complete(store.read(tr -> store.schema().readRegistrations(tr, address, store.executor())), promise);
  }

  private void apply(List<ClusterSchema.RegistrationChange> changes) {
    Set<String> addresses = new LinkedHashSet<>();
    for (ClusterSchema.RegistrationChange c : changes) {
      if (c.stamp().compareTo(cursor) > 0) {
        cursor = c.stamp();
        addresses.add(c.address());
      }
    }
    try {
      deliver(addresses);
    } catch (RuntimeException e) {
      log.warn("node " + nodeId + ": delivering registration updates failed: " + FdbErrors.unwrap(e));
    }
  }

  private void deliver(Set<String> addresses) {
    RegistrationListener l = listener;
    if (l == null || addresses.isEmpty()) {
      return;
    }
    List<String> wanted = new ArrayList<>();
    for (String a : addresses) {
      if (l.wantsUpdatesFor(a)) {
        wanted.add(a);
      }
    }
    if (wanted.isEmpty()) {
      return;
    }
    Map<String, List<RegistrationInfo>> current = store.read(tr -> {
      Map<String, CompletableFuture<List<RegistrationInfo>>> reads = new LinkedHashMap<>();
      for (String a : wanted) {
        reads.put(a, store.schema().readRegistrations(tr, a, store.executor()));
      }
      return CompletableFuture.allOf(reads.values().toArray(new CompletableFuture<?>[0])).thenApply(v -> {
        Map<String, List<RegistrationInfo>> out = new LinkedHashMap<>();
        reads.forEach((a, f) -> out.put(a, f.join()));
        return out;
      });
    }).join();
    current.forEach((address, list) -> {
      if (!state.stopped()) {
        l.registrationsUpdated(new RegistrationUpdateEvent(address, list));
      }
    });
  }
}
