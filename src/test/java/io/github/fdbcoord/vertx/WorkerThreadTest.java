package io.github.fdbcoord.vertx;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.vertx.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * FoundationDB calls never run on an event loop: every call into the database (which, on the
 * embedded engine, also runs the read synchronously) is made on a store worker thread, and replies
 * complete on the caller's context. The Vert.x instance checks for blocked threads every 10 ms.
 */
class WorkerThreadTest {
  private Vertx vertx;
  private EmbeddedDatabase engine;
  private final List<String> eventLoopCalls = Collections.synchronizedList(new ArrayList<>());
  private final Set<String> callingThreads = ConcurrentHashMap.newKeySet();

  @BeforeEach
  void start() {
    vertx = Vertx.vertx(new VertxOptions().setBlockedThreadCheckInterval(10)
        .setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS)
        .setMaxEventLoopExecuteTime(20).setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS));
    engine = EmbeddedDatabase.inMemory();
  }

  @AfterEach
  void stop() {
    await(vertx.close());
    engine.close();
  }

  /** The real engine behind a recorder of the thread of every call (a delegate, not a mock). */
  private Database recording(Database real) {
    return (Database) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Database.class},
        (proxy, method, args) -> {
          if (Context.isOnEventLoopThread()) {
            eventLoopCalls.add(method.getName() + " on " + Thread.currentThread().getName());
          }
          callingThreads.add(Thread.currentThread().getName());
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void storeCallsRunOnWorkersAndRepliesOnTheCallersContext() throws Throwable {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    try (ServiceFixture f = ServiceFixture.start(vertx, config, recording(engine))) {
      VertxTestContext test = new VertxTestContext();
      vertx.deployVerticle(new VerticleBase() {
        @Override
        public Future<?> start() {
          CoordinationClient c = CoordinationClient.create(vertx);
          Context mine = context;
          return c.intern("ns", List.of("a", "b"))
              .compose(ids -> c.lookup("ns", ids))
              .compose(s -> c.allocate("ids"))
              .compose(v -> c.tryAcquire("m", "o"))
              .compose(g -> c.release("m", "o", g.token().get()))
              .compose(e -> c.createOrOpenDirectory(f.dir("x"), null))
              .onComplete(test.succeeding(info -> test.verify(() -> {
                assertTrue(Vertx.currentContext() == mine, "the reply completes on the caller's context");
                assertTrue(Context.isOnEventLoopThread());
                test.completeNow();
              })));
        }
      });
      assertTrue(test.awaitCompletion(20, TimeUnit.SECONDS));
      if (test.failed()) {
        throw test.causeOfFailure();
      }
      assertTrue(eventLoopCalls.isEmpty(), "store calls on an event loop: " + eventLoopCalls);
      assertFalse(callingThreads.isEmpty());
      for (String t : callingThreads) {
        assertTrue(t.startsWith(StoreWorkers.THREAD_PREFIX) || t.startsWith("fdb"),
            "store called from " + t + " (all calls: " + callingThreads + ")");
      }
    }
  }

  @Test
  void workersRunLayerCallsAndCompleteOnTheGivenContext() throws Exception {
    StoreWorkers workers = new StoreWorkers(2);
    try {
      Context ctx = vertx.getOrCreateContext();
      String[] seen = new String[2];
      Future<String> f = workers.call(ctx, () -> {
        seen[0] = Thread.currentThread().getName();
        return java.util.concurrent.CompletableFuture.completedFuture("x");
      }).map(x -> {
        seen[1] = Vertx.currentContext() == ctx ? "caller" : "elsewhere";
        return x;
      });
      assertEquals("x", await(f));
      assertTrue(seen[0].startsWith(StoreWorkers.THREAD_PREFIX), seen[0]);
      assertEquals("caller", seen[1]);
    } finally {
      workers.close();
    }
  }
}
