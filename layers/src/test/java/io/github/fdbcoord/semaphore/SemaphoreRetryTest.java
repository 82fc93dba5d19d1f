package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A release retried after {@code commit_unknown_result} whose first commit did succeed finds its own earlier commit
 * and succeeds, handing the permit on once.
 */
class SemaphoreRetryTest extends SemaphoreTestSupport {
  /** As the retry loop sees a commit whose answer was lost: the first attempt committed, then reported unknown. */
  private static <T> CompletableFuture<T> committedThenUnknown(FdbSemaphoreService s,
      Function<Transaction, CompletableFuture<T>> body) {
    AtomicInteger attempts = new AtomicInteger();
    return s.transact(tr -> {
      if (attempts.getAndIncrement() == 0) {
        return db.runAsync(body, s.executor).thenCompose(
            committed -> CompletableFuture.<T>failedFuture(FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT)));
      }
      return body.apply(tr);
    });
  }

  @Test
  void aReleaseRetriedAfterItsCommitSucceededSucceedsAndHandsOnOnce() {
    FdbSemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", Duration.ZERO));
    CompletableFuture<SemaphoreHandle> b = s.acquire("sem", 1, "b", null);
    eventually("b queued", Duration.ofSeconds(30), () -> await(s.state("sem")).waiters().equals(List.of("b")));
    CompletableFuture<SemaphoreHandle> c = s.acquire("sem", 1, "c", null);
    eventually("c queued", Duration.ofSeconds(30), () -> await(s.state("sem")).waiters().equals(List.of("b", "c")));
    a.close(); // its heartbeats stop; the release below is the test's
    FencingToken token = a.token();
    await(committedThenUnknown(s, tr -> s.releaseIn(tr, "sem", "a", token)));
    SemaphoreHandle next = await(b);
    assertEquals("b", next.owner());
    SemaphoreService.SemaphoreState state = await(s.state("sem"));
    assertEquals(List.of(new SemaphoreService.Holder("b", next.token())), state.holders(), "handed on once");
    assertEquals(List.of("c"), state.waiters());
    await(next.release());
    await(await(c).release());
  }
}
