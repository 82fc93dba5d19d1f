package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Release and downgrade retried after {@code commit_unknown_result} whose first commit did succeed: the retry finds
 * its own earlier commit (the layer's record of grants their owners ended) and answers as that commit did, instead
 * of NOT_HELD; a grant that ended otherwise (an expiry) is still refused.
 */
class ReadWriteLockRetryTest extends ReadWriteLockTestSupport {
  /**
   * Runs {@code body} through the service's retry loop, with a first attempt whose effect is committed (in a
   * transaction of its own) and which then reports commit_unknown_result, as a commit whose answer was lost would.
   */
  private static <T> CompletableFuture<T> committedThenUnknown(FdbReadWriteLockService s,
      Function<Transaction, CompletableFuture<Stamped<T>>> body) {
    AtomicInteger attempts = new AtomicInteger();
    return s.transact(tr -> {
      if (attempts.getAndIncrement() == 0) {
        return db.runAsync(body, s.executor()).thenCompose(Stamped::resolve).thenCompose(
            committed -> CompletableFuture.<Stamped<T>>failedFuture(FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT)));
      }
      return body.apply(tr);
    });
  }

  @Test
  void aReleaseRetriedAfterItsCommitSucceededSucceedsAndHandsOnOnce() {
    FdbReadWriteLockService s = service(quiet());
    ReadWriteGrant writer = await(s.tryAcquire("l", "w", LockMode.WRITE)).orElseThrow();
    await(s.tryAcquire("l", "r1", LockMode.READ));
    await(s.tryAcquire("l", "w2", LockMode.WRITE));
    await(committedThenUnknown(s, tr -> s.releaseIn(tr, writer)));
    assertEquals(List.of("r1"), holders(s, "l"), "the reader at the head was let in once");
    assertEquals(List.of("w2"), queue(s, "l"), "the writer behind it still waits");
    // The record is of w's grant: the same token presented by another owner is refused.
    ReadWriteGrant forged = new ReadWriteGrant("l", "r1", LockMode.WRITE, writer.token());
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, failure(ReadWriteLockException.class, s.release(forged)).kind());
  }

  @Test
  void aDowngradeRetriedAfterItsCommitSucceededAnswersWithTheReadGrantItMade() {
    FdbReadWriteLockService s = service(quiet());
    ReadWriteGrant writer = await(s.tryAcquire("l", "w", LockMode.WRITE)).orElseThrow();
    await(s.tryAcquire("l", "r1", LockMode.READ));
    ReadWriteGrant read = await(committedThenUnknown(s, tr -> s.downgradeIn(tr, writer)));
    assertEquals(LockMode.READ, read.mode());
    ReadWriteLockState state = await(s.state("l"));
    // Holders in owner order: the reader's grant, then the one answered, which is the grant the store holds.
    assertEquals(List.of("r1", "w"), state.holders().stream().map(ReadWriteGrant::owner).toList());
    assertEquals(read, state.holders().get(1));
    assertEquals(List.of(), state.queue());
    // The grant answered is live: it heartbeats and releases.
    await(s.heartbeat(read));
    await(s.release(read));
    assertEquals(List.of("r1"), holders(s, "l"));
  }

  @Test
  void aGrantThatExpiredIsStillRefused() {
    FdbReadWriteLockService s = service(quiet());
    ReadWriteGrant writer = await(s.tryAcquire("l", "w", LockMode.WRITE)).orElseThrow();
    long now = System.currentTimeMillis();
    s.clock = () -> now + quiet().build().lease().toMillis() + 1_000;
    assertEquals(1, (int) await(s.transact(tr -> s.expireIn(tr, "l"))));
    ReadWriteLockException refused = failure(ReadWriteLockException.class, s.release(writer));
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, refused.kind());
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, failure(ReadWriteLockException.class, s.downgrade(writer)).kind());
  }
}
