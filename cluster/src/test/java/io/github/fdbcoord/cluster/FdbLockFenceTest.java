package io.github.fdbcoord.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.NotOwnerException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Lock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link FdbLock#fence}: a SharedData lock's holder fences its own FoundationDB transaction with its grant; once the
 * lock has passed to another node, the old grant's fenced transaction is refused and writes nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FdbLockFenceTest {
  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final List<Vertx> nodes = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : nodes) {
      v.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    db.close();
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static byte[] key(String k) {
    return ("fence-test/" + k).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aReplacedHoldersFencedTransactionIsRefusedAndTheNewHoldersCommits() throws Exception {
    FdbClusterManagerOptions options = FdbClusterManagerOptions.builder().database(db).nodeLease(Duration.ofSeconds(45)).logRetention(Duration.ofSeconds(120))
        .heartbeatInterval(Duration.ofSeconds(2)).reaperInterval(Duration.ofSeconds(1)).build();
    for (int i = 0; i < 2; i++) {
      nodes.add(await(Vertx.builder().withClusterManager(new FdbClusterManager(options)).buildClustered()));
    }
    FdbLock first = (FdbLock) await(nodes.get(0).sharedData().getLockWithTimeout("orders", 10_000));
    db.runAsync(tr -> first.fence(tr).thenRun(() -> tr.set(key("a"), new byte[] {1}))).get(30, TimeUnit.SECONDS);
    assertArrayEquals(new byte[] {1}, db.readAsync(tr -> tr.get(key("a"))).get(30, TimeUnit.SECONDS));

    Future<Lock> waiting = nodes.get(1).sharedData().getLockWithTimeout("orders", 30_000);
    first.releaseAsync().get(30, TimeUnit.SECONDS);
    FdbLock second = (FdbLock) await(waiting);
    assertTrue(second.token().isNewerThan(first.token()));

    ExecutionException refused = assertThrows(ExecutionException.class, () ->
        db.runAsync(tr -> first.fence(tr).thenRun(() -> tr.set(key("b"), new byte[] {1}))).get(30, TimeUnit.SECONDS));
    assertTrue(refused.getCause() instanceof NotOwnerException, "refused by the store: " + refused.getCause());
    assertEquals(second.token(), ((NotOwnerException) refused.getCause()).current().token());
    assertNull(db.readAsync(tr -> tr.get(key("b"))).get(30, TimeUnit.SECONDS), "the replaced holder wrote nothing");

    db.runAsync(tr -> second.fence(tr).thenRun(() -> tr.set(key("b"), new byte[] {2}))).get(30, TimeUnit.SECONDS);
    assertArrayEquals(new byte[] {2}, db.readAsync(tr -> tr.get(key("b"))).get(30, TimeUnit.SECONDS));
    second.release();
  }
}
