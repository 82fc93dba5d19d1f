package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.service.eventbus.StoreWorkers;
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

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * FoundationDB calls never block an event loop: on a store whose calls never block their caller
 * (fdb-java's client, the in-memory engine) a layer call starts on the event loop that received the
 * request, since a hand-off to a worker would only add a thread wake-up; on a store that may block
 * (the durable engine reads its storage on the calling thread) it starts on a store worker. Replies
 * complete on the caller's context. The Vert.x instance checks for blocked threads every 10 ms and
 * reports every event-loop block over 100 ms with its stack: none may be inside a store or layer call
 * once the code is loaded (a blocking call holds a loop far longer; 100 ms rather than Vert.x's
 * default 2 s, and above the scheduling delays of a loaded 2-core machine)
 * (blocks from class loading or CPU starvation on a loaded machine are reported but allowed).
 */
class WorkerThreadTest {
  private Vertx vertx;
  private EmbeddedDatabase engine;
  private final List<String> eventLoopCalls = Collections.synchronizedList(new ArrayList<>());
  private final Set<String> callingThreads = ConcurrentHashMap.newKeySet();

  @BeforeEach
  void start() {
    blockedLog.addHandler(blockedRecorder);
    // Every event-loop block over 100 ms is reported with the blocked thread's stack.
    vertx = Vertx.vertx(new VertxOptions().setBlockedThreadCheckInterval(10)
        .setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS)
        .setMaxEventLoopExecuteTime(100).setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS)
        .setWarningExceptionTime(1).setWarningExceptionTimeUnit(TimeUnit.MILLISECONDS));
    engine = EmbeddedDatabase.inMemory();
  }

  private final java.util.logging.Logger blockedLog =
      java.util.logging.Logger.getLogger("io.vertx.core.impl.BlockedThreadChecker");
  private final List<Throwable> blockedStacks = Collections.synchronizedList(new ArrayList<>());
  private final java.util.logging.Handler blockedRecorder = new java.util.logging.Handler() {
    @Override
    public void publish(java.util.logging.LogRecord record) {
      if (record.getThrown() != null) {
        blockedStacks.add(record.getThrown());
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  /** Blocked event loops whose stack shows a store or layer call (as opposed to class loading or CPU starvation). */
  private List<String> blockedInStoreCalls() {
    List<String> out = new ArrayList<>();
    synchronized (blockedStacks) {
      for (Throwable t : blockedStacks) {
        for (StackTraceElement e : t.getStackTrace()) {
          String c = e.getClassName();
          if (c.startsWith("com.apple.foundationdb") || c.startsWith("io.github.fdbcoord.embedded")
              || c.startsWith("io.github.fdbcoord.interner") || c.startsWith("io.github.fdbcoord.mutex")
              || c.startsWith("io.github.fdbcoord.allocator") || c.startsWith("io.github.fdbcoord.directory")) {
            out.add(t.getMessage() + " at " + e);
            break;
          }
        }
      }
    }
    return out;
  }

  @AfterEach
  void stop() {
    blockedLog.removeHandler(blockedRecorder);
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
  void storeCallsNeverBlockAnEventLoopAndRepliesCompleteOnTheCallersContext() throws Throwable {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    try (ServiceFixture f = ServiceFixture.start(vertx, config, recording(engine))) {
      // Once through the same calls first: loading the layers' and the engine's classes is not blocking.
      CoordinationClient warm = CoordinationClient.create(vertx);
      await(warm.intern("warm", List.of("a")).compose(ids -> warm.lookup("warm", ids))
          .compose(s -> warm.allocate("warm")).compose(v -> warm.tryAcquire("w", "o"))
          .compose(g -> warm.release("w", "o", g.token().get()))
          .compose(e -> warm.createOrOpenDirectory(f.dir("warm"), null)));
      blockedStacks.clear();
      eventLoopCalls.clear();
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
      assertTrue(blockedInStoreCalls().isEmpty(), "event loop blocked in a store call: " + blockedInStoreCalls());
      assertFalse(callingThreads.isEmpty());
      // This store never blocks its caller: the layer calls start on the layers' event loops.
      assertFalse(eventLoopCalls.isEmpty(), "no store call started on an event loop: " + callingThreads);
      for (String t : callingThreads) {
        assertTrue(t.startsWith(StoreWorkers.THREAD_PREFIX) || t.startsWith("fdb") || t.startsWith("vert.x-eventloop"),
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

  @Test
  void callsStartOnTheCallersThreadOnlyWhenTheStoreNeverBlocksIt() throws Exception {
    StoreWorkers workers = new StoreWorkers(2);
    try {
      String[] thread = new String[1];
      java.util.function.Supplier<java.util.concurrent.CompletableFuture<String>> call = () -> {
        thread[0] = Thread.currentThread().getName();
        return java.util.concurrent.CompletableFuture.completedFuture("x");
      };
      assertEquals("x", await(workers.callAndStay(call)));
      assertTrue(thread[0].startsWith(StoreWorkers.THREAD_PREFIX), thread[0]);

      workers.startCallsOnCallerThread(true);
      Future<String> inline = workers.callAndStay(call);
      // Answered at once: complete before callAndStay returns, on this thread, without a hop.
      assertTrue(inline.succeeded());
      assertEquals("x", inline.result());
      assertEquals(Thread.currentThread().getName(), thread[0]);
      Future<String> failed = workers.callAndStay(() -> {
        throw new IllegalArgumentException("bad input");
      });
      assertTrue(failed.failed());
      assertEquals("bad input", failed.cause().getMessage());
    } finally {
      workers.close();
    }
  }
}
