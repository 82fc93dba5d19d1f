package io.github.fdbcoord.client;

import io.vertx.core.Future;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * What the typed clients of one primitive ({@link ElectionClient}, {@link SemaphoreClient},
 * {@link ReadWriteLockClient}) share: the {@link CoordinationClient} whose request plumbing, timeouts and liveness
 * address they use, and the taking of a held handle.
 */
abstract class PrimitiveClient {
  /**
   * Makes the held handle of a grant: on the context that asked, renewing every {@code renewInterval} (null: a third
   * of the lease).
   */
  interface HandleFactory<G, H> {
    H create(ContextInternal context, G grant, Duration renewInterval, long acquireSentAt);
  }

  final CoordinationClient client;
  private final String address;

  PrimitiveClient(CoordinationClient client, String address) {
    this.client = client;
    this.address = address;
  }

  /** The address this client talks to. */
  public String address() {
    return address;
  }

  final Future<JsonObject> request(String action, JsonObject body) {
    return client.request(address, action, body);
  }

  /** A request that waits in a queue up to {@code timeout}, with this instance's liveness address. */
  final Future<JsonObject> waiting(String action, JsonObject body, Duration timeout) {
    return client.waiting(address, action, body, timeout);
  }

  /** The body naming a semaphore's or a lock's {@code name} and {@code owner}. */
  static JsonObject nameAndOwner(String name, String owner) {
    return new JsonObject().put("name", name).put("owner", owner);
  }

  /** How many waits an {@code abandon} ended. */
  static int abandoned(JsonObject reply) {
    return reply.getInteger("abandoned");
  }

  /**
   * Takes a grant through {@code acquire} (given the owner name: {@code options}' or a random one) and wraps it in
   * the held handle {@code handle} makes, tied to the caller's context.
   */
  final <G, H> Future<H> hold(LockOptions options, Function<String, Future<G>> acquire, HandleFactory<G, H> handle) {
    Objects.requireNonNull(options, "options");
    ContextInternal context = LeaseKeeper.callerContext(client.vertx());
    long sentAt = System.nanoTime();
    return acquire.apply(options.ownerOrRandom())
        .map(grant -> handle.create(context, grant, options.getRenewInterval(), sentAt));
  }
}
