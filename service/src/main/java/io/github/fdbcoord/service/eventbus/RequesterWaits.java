package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MultiMutexWait;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexWait;
import io.github.fdbcoord.rwlock.ReadWriteGrant;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.semaphore.SemaphoreWait;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The layers' waits ({@link MutexService#awaitGrant}, {@link SemaphoreService#awaitGrant}, the read-write lock's
 * {@code awaitGrant}) started for event-bus
 * requesters, with what is about the event bus alone: each request is answered with why its wait ended (abandoned, the
 * requester gone, the service stopping), and a requester that sent a liveness address is pinged
 * there; one whose node no longer has a handler at it abandons its wait.
 */
final class RequesterWaits<G> {
  private final Set<Waiting<G>> waiting = ConcurrentHashMap.newKeySet();

  /**
   * A layer's wait for a grant {@code G}, as far as ending it goes: the layers' waits have the same shape but no
   * common type in the layers, which know nothing of each other.
   */
  record Wait<G>(String layer, String name, String owner, CompletableFuture<G> granted,
      Supplier<CompletableFuture<Boolean>> cancel, List<String> names) {
    /** A wait for the one lock {@code name}. */
    Wait(String layer, String name, String owner, CompletableFuture<G> granted, Supplier<CompletableFuture<Boolean>> cancel) {
      this(layer, name, owner, granted, cancel, List.of(name));
    }

    /** A wait for several mutexes at once: ended by the abandon of any of them. */
    static Wait<Map<String, FencingToken>> of(MultiMutexWait w) {
      return new Wait<>("mutexes", String.join("', '", w.names()), w.owner(), w.granted(), w::cancel, w.names());
    }

    static Wait<FencingToken> of(MutexWait w) {
      return new Wait<>("mutex", w.name(), w.owner(), w.granted(), w::cancel);
    }

    static Wait<FencingToken> of(SemaphoreWait w) {
      return new Wait<>("semaphore", w.name(), w.owner(), w.granted(), w::cancel);
    }

    /**
     * The read-write lock's wait: {@code cancel} ends it, completing once it left the queue and released a grant that
     * raced it ({@code ReadWriteLockService.withdraw}).
     */
    static Wait<ReadWriteGrant> ofReadWriteLock(String name, String owner, CompletableFuture<ReadWriteGrant> granted,
        Supplier<CompletableFuture<Boolean>> cancel) {
      return new Wait<>("read-write lock", name, owner, granted, cancel);
    }
  }

  private static final class Waiting<G> {
    final Wait<G> wait;
    final String liveness;
    volatile ReplyException endedBecause;

    Waiting(Wait<G> wait, String liveness) {
      this.wait = wait;
      this.liveness = liveness;
    }

    Future<Boolean> end(ReplyException why) {
      endedBecause = why;
      return Future.fromCompletionStage(wait.cancel().get());
    }
  }

  /**
   * Tracks {@code wait} until it ends; the returned future completes with its grant's token, or
   * fails with the reason it was ended by this class (or the layer's failure).
   */
  CompletableFuture<G> track(Wait<G> wait, String liveness) {
    Waiting<G> w = new Waiting<>(wait, liveness);
    waiting.add(w);
    return wait.granted().whenComplete((token, e) -> waiting.remove(w)).exceptionallyCompose(e -> {
      Throwable cause = FdbErrors.unwrap(e);
      return CompletableFuture.failedFuture(cause instanceof CancellationException && w.endedBecause != null
          ? w.endedBecause : cause);
    });
  }

  /** Ends the waits of {@code owner} for {@code name} (a mutex or semaphore, as this instance serves); completes, with how many, once they left the queue. */
  Future<Integer> end(String name, String owner, ReplyException why) {
    return end(List.of(name), owner, why);
  }

  /**
   * Ends the waits of {@code owner} for any of {@code names} (a wait for several locks ends when one of them is
   * named); completes, with how many, once they left their queues.
   */
  Future<Integer> end(Collection<String> names, String owner, ReplyException why) {
    List<Future<?>> ended = new ArrayList<>();
    for (Waiting<G> w : waiting) {
      if (w.wait.owner().equals(owner) && w.wait.names().stream().anyMatch(names::contains)) {
        ended.add(w.end(why));
      }
    }
    return Future.join(ended).transform(ar -> Future.succeededFuture(ended.size()));
  }

  /** Ends every wait, each answered with {@code why.apply(wait)}; completes once they all left their queues. */
  Future<?> endAll(Function<Wait<G>, ReplyException> why) {
    List<Future<?>> ended = new ArrayList<>();
    for (Waiting<G> w : waiting) {
      ended.add(w.end(why.apply(w.wait)));
    }
    return Future.join(ended);
  }

  /**
   * Pings every requester that gave a liveness address. Only a registration that is gone counts as
   * the requester's departure: a slow answer (load, a pause) is no proof of death.
   */
  void pingRequesters(Vertx vertx, Duration timeout) {
    for (Waiting<G> w : waiting) {
      if (w.liveness == null) {
        continue;
      }
      vertx.eventBus().request(w.liveness, new JsonObject(), new DeliveryOptions().setSendTimeout(timeout.toMillis()))
          .onFailure(e -> {
            if (e instanceof ReplyException && ((ReplyException) e).failureType() == ReplyFailure.NO_HANDLERS) {
              w.end(FailureCodes.failure(FailureCodes.CONFLICT, "abandoned", "the node that sent the acquire of " + w.wait.layer() + " '"
                  + w.wait.name() + "' by '" + w.wait.owner() + "' is gone (" + e.getMessage() + ")"));
            }
          });
    }
  }
}
