package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.testsupport.LayerTestSupport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** The mutex tests' options and services, over {@link LayerTestSupport}. */
abstract class MutexTestSupport extends LayerTestSupport<MutexService> {
  MutexTestSupport() {
    super("mutex");
  }

  /** Reaper off, long lease: behaviour tests where nothing may expire by itself. */
  static MutexOptions.Builder quiet() {
    return MutexOptions.builder().reaperEnabled(false).lease(Duration.ofSeconds(30)).heartbeatInterval(Duration.ofSeconds(1));
  }

  /** A fast reaper: lease 600 ms, heartbeat 100 ms, scan every 20 ms (margins for a loaded 2-core machine). */
  static MutexOptions.Builder fast() {
    return MutexOptions.builder()
        .lease(Duration.ofMillis(600))
        .heartbeatInterval(Duration.ofMillis(100))
        .reaperInterval(Duration.ofMillis(20));
  }

  FdbMutexService service(MutexOptions.Builder options) {
    FdbMutexService s = (FdbMutexService) MutexService.create(db, root, options.build());
    return track(s);
  }

  /**
   * Runs {@code body} through the service's real retry loop, with a first attempt whose effect is
   * committed (in a transaction of its own) and which then reports commit_unknown_result, as a
   * commit whose acknowledgement was lost would: the loop retries the body.
   */
  static <T> CompletableFuture<T> committedThenUnknown(FdbMutexService s,
      Function<Transaction, CompletableFuture<AfterCommit<T>>> body) {
    AtomicInteger attempts = new AtomicInteger();
    return s.transact(tr -> {
      if (attempts.getAndIncrement() == 0) {
        return s.db.runAsync(body, s.executor).thenCompose(AfterCommit::resolve).thenCompose(
            committed -> CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT)));
      }
      return body.apply(tr);
    });
  }
}
