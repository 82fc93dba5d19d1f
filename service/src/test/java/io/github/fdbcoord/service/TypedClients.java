package io.github.fdbcoord.service;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;


/** What the tests of the typed election, semaphore and read-write lock clients share. */
final class TypedClients {
  /**
   * The service's leases for these tests: long enough that a held handle renewing at a third of it survives a
   * loaded machine (at 4 s, one hunt run in 20 lost a handle whose event loop stalled 3 s at load 7-15), short
   * enough for the waits on a loss.
   */
  static final long LEASE_MS = 6_000;

  private TypedClients() {}

  /** The fixture's configuration with {@link #LEASE_MS} for the mutex (the elections'), semaphore and rwlock. */
  static JsonObject config() {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    config.getJsonObject("mutex").put("leaseMs", LEASE_MS).put("heartbeatIntervalMs", 300)
        .put("maxAcquireTimeoutMs", 50_000);
    JsonObject layer = new JsonObject().put("leaseMs", LEASE_MS).put("heartbeatIntervalMs", 300)
        .put("reaperIntervalMs", 100);
    config.put("semaphore", layer.copy()).put("rwlock", layer.copy());
    return config;
  }

  /** What a loss future completed with, failing when no loss was reported within a few leases. */
  static <T> T lost(Future<T> lost, String what) {
    try {
      return lost.await(5 * LEASE_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the loss of " + what + " was never reported", e);
    }
  }

  /**
   * Runs {@code contenders} loops at once, each on a context of its own, and waits for them all; a loop's failure
   * fails the test with its cause.
   */
  static void runAll(Vertx vertx, int contenders, IntFunction<Future<?>> contender) {
    List<Future<?>> all = new ArrayList<>();
    for (int i = 0; i < contenders; i++) {
      int id = i;
      Promise<Object> done = Promise.promise();
      vertx.getOrCreateContext().runOnContext(v -> contender.apply(id).onComplete(ar -> done.handle(ar.map(x -> x))));
      all.add(done.future());
    }
    try {
      Future.all(all).await(60, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the contenders did not finish within 60 s", e);
    }
  }

  /** Runs {@code step} {@code times} times, one after the other. */
  static Future<Void> repeat(int times, IntFunction<Future<?>> step) {
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < times; i++) {
      int round = i;
      chain = chain.compose(v -> step.apply(round).mapEmpty());
    }
    return chain;
  }

  /** A short pause inside a critical section, so that contenders overlap. */
  static Future<Void> briefly(Vertx vertx) {
    Promise<Void> p = Promise.promise();
    vertx.setTimer(1 + (long) (Math.random() * 5), id -> p.complete());
    return p.future();
  }
}
