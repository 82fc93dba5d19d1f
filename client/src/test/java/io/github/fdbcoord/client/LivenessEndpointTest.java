package io.github.fdbcoord.client;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The liveness address: answered whoever registered it, shared while acquires wait, gone once idle. */
class LivenessEndpointTest {
  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.await(10, TimeUnit.SECONDS);
  }

  private Future<JsonObject> ping(String address) {
    return vertx.eventBus().<JsonObject>request(address, new JsonObject()).map(m -> m.body());
  }

  @Test
  void survivesTheUndeployOfTheVerticleThatRegisteredIt() throws Exception {
    LivenessEndpoint endpoint = new LivenessEndpoint(vertx, "p", 60_000);
    AtomicReference<String> address = new AtomicReference<>();
    String id = await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        return endpoint.enter().onSuccess(address::set);
      }
    }));
    assertTrue(address.get().startsWith("p.liveness."), address.get());
    await(vertx.undeploy(id));
    assertEquals(new JsonObject(), await(ping(address.get())));
    // A second waiter shares the address.
    assertEquals(address.get(), await(endpoint.enter()));
    endpoint.done();
    endpoint.done();
  }

  @Test
  void completesOnTheCallersContext() throws Exception {
    LivenessEndpoint endpoint = new LivenessEndpoint(vertx, "p", 60_000);
    AtomicReference<Object> contextOfResult = new AtomicReference<>();
    AtomicReference<Object> callerContext = new AtomicReference<>();
    await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        callerContext.set(context);
        return endpoint.enter().onSuccess(a -> contextOfResult.set(Vertx.currentContext()));
      }
    }));
    assertNotNull(contextOfResult.get());
    assertSame(callerContext.get(), contextOfResult.get());
  }

  @Test
  void unregisteredOnceNoAcquireWaitedForTheIdleTime() throws Exception {
    LivenessEndpoint endpoint = new LivenessEndpoint(vertx, "p", 50);
    String first = await(endpoint.enter());
    endpoint.done();
    // A ping delivered while the idle timer unregisters is discarded, and Vert.x answers a discarded
    // request with TIMEOUT ("Discarded the request") at once; the pings after it find no handler.
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    ReplyException failure = null;
    while ((failure == null || isDiscard(failure)) && System.nanoTime() < end) {
      Thread.sleep(20);
      try {
        await(ping(first));
      } catch (Exception e) {
        failure = assertInstanceOf(ReplyException.class, e instanceof ReplyException ? e : e.getCause());
      }
    }
    assertNotNull(failure, "the idle address still answered after 10 s");
    assertEquals(ReplyFailure.NO_HANDLERS, failure.failureType(), failure.getMessage());
    // The next acquire registers a fresh address.
    String second = await(endpoint.enter());
    assertNotEquals(first, second);
    assertEquals(new JsonObject(), await(ping(second)));
    endpoint.done();
  }

  private static boolean isDiscard(ReplyException e) {
    return e.failureType() == ReplyFailure.TIMEOUT && String.valueOf(e.getMessage()).startsWith("Discarded");
  }

  @Test
  void notUnregisteredWhileAnAcquireWaits() throws Exception {
    LivenessEndpoint endpoint = new LivenessEndpoint(vertx, "p", 50);
    String address = await(endpoint.enter());
    await(endpoint.enter());
    endpoint.done();
    Thread.sleep(200);
    assertEquals(new JsonObject(), await(ping(address)));
    endpoint.done();
    assertThrows(Exception.class, () -> {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (System.nanoTime() < end) {
        await(ping(address));
        Thread.sleep(20);
      }
    });
  }
}
