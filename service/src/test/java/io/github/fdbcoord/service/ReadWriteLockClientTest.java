package io.github.fdbcoord.service;

import io.github.fdbcoord.client.ClientReadWriteLock;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.LockOptions;
import io.github.fdbcoord.client.ReadWriteLockClient;
import io.github.fdbcoord.client.ReadWriteLockClient.Grant;
import io.github.fdbcoord.client.ReadWriteLockClient.Holder;
import io.github.fdbcoord.client.ReadWriteLockClient.State;
import io.github.fdbcoord.client.ReadWriteLockClient.Waiter;
import io.github.fdbcoord.client.ReadWriteToken;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.fdbcoord.client.ReadWriteLockClient.Mode.READ;
import static io.github.fdbcoord.client.ReadWriteLockClient.Mode.WRITE;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.ServiceFixture.failure;
import static io.github.fdbcoord.service.TypedClients.lost;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CoordinationClient#readWriteLocks()} against the service's verticles on the embedded engine: the typed
 * calls, a held {@link ClientReadWriteLock} that heartbeats (across a downgrade) and reports its loss, never a writer
 * with anyone else among many contenders with strictly increasing tokens, and the documented failures.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadWriteLockClientTest {
  private Vertx vertx;
  private ServiceFixture f;
  private ReadWriteLockClient locks;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    f = ServiceFixture.start(vertx, TypedClients.config(), null);
    locks = CoordinationClient.create(vertx).readWriteLocks();
  }

  @AfterEach
  void stop() {
    f.close();
    await(vertx.close());
  }

  @Test
  void tokensParseAndPrintTheWireForm() {
    ReadWriteToken t = ReadWriteToken.parse("0000000000000001000a0003");
    assertEquals("0000000000000001000a", t.commit().toString());
    assertEquals(3, t.order());
    assertEquals("0000000000000001000a0003", t.toString());
    assertTrue(ReadWriteToken.parse("0000000000000001000a0004").isNewerThan(t));
    assertTrue(ReadWriteToken.parse("0000000000000002000a0000").isNewerThan(t));
    for (String bad : new String[] {"0000000000000001000a", "0000000000000001000a000g", "0000000000000001000a00030"}) {
      assertThrows(IllegalArgumentException.class, () -> ReadWriteToken.parse(bad), bad);
    }
    assertThrows(IllegalArgumentException.class, () -> new ReadWriteToken(t.commit(), 0x10000));
  }

  @Test
  void theTypedCallsRoundTrip() throws Exception {
    assertEquals(new State("l", List.of(), List.of()), await(locks.state("l")));
    Grant w = await(locks.acquire("l", "w", WRITE, Duration.ofSeconds(5)));
    assertEquals(new Grant("l", "w", WRITE, w.token(), Duration.ofMillis(TypedClients.LEASE_MS)), w);
    assertEquals(w, await(locks.heartbeat("l", "w", w.token(), WRITE)));
    assertEquals(w, await(locks.heartbeat("l", "w", w.token(), null)), "the mode read from the holders");
    failure(locks.acquire("l", "r", READ, Duration.ZERO), 409, "timed_out");

    Future<Grant> r = locks.acquire("l", "r", READ, Duration.ofSeconds(20));
    eventually("'r' waits", Duration.ofSeconds(20), () -> !await(locks.state("l")).queue().isEmpty());
    assertEquals(new State("l", List.of(new Holder("w", WRITE, w.token())), List.of(new Waiter("r", READ))),
        await(locks.state("l")));
    Grant down = await(locks.downgrade("l", "w", w.token(), WRITE));
    assertEquals(READ, down.mode());
    assertTrue(down.token().isNewerThan(w.token()));
    Grant rg = await(r);
    assertEquals(READ, rg.mode());
    failure(locks.heartbeat("l", "w", w.token(), WRITE), 409, "not_held");
    failure(locks.downgrade("l", "r", rg.token(), READ), 400, "bad_request");

    Future<Grant> w2 = locks.acquire("l", "w2", WRITE, Duration.ofSeconds(30));
    eventually("'w2' waits", Duration.ofSeconds(20), () -> !await(locks.state("l")).queue().isEmpty());
    assertEquals(1, await(locks.abandon("l", "w2")));
    failure(w2, 409, "abandoned");
    await(locks.release("l", "w", down.token(), READ));
    await(locks.release("l", "r", rg.token(), null));
    failure(locks.release("l", "r", rg.token(), null), 409, "not_held");
    assertEquals(new State("l", List.of(), List.of()), await(locks.state("l")));
  }

  @Test
  void badInputGetsTheDocumentedFailure() {
    failure(locks.acquire("  ", "a", READ, Duration.ofSeconds(1)), 400, "bad_request");
    failure(locks.acquire("l", "", WRITE, Duration.ofSeconds(1)), 400, "bad_request");
    failure(locks.acquire("l", "a", READ, Duration.ofSeconds(51)), 400, "bad_request"); // over maxAcquireTimeoutMs
    failure(locks.heartbeat("l", "a", null, READ), 400, "bad_request");
    failure(locks.lock(" ", WRITE), 400, "bad_request");
  }

  @Test
  void aLockHeldLongerThanTheLeaseStaysAcrossADowngrade() throws Exception {
    ClientReadWriteLock lock = await(locks.lock("long", WRITE, new LockOptions().setOwner("writer")));
    assertEquals(WRITE, lock.mode());
    ReadWriteToken written = lock.token();
    assertTrue(await(lock.downgrade()) == lock);
    assertEquals(READ, lock.mode());
    assertTrue(lock.token().isNewerThan(written));
    // Two leases pass: only heartbeats under the new token keep the grant.
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * TypedClients.LEASE_MS);
    eventually("two leases passed", Duration.ofSeconds(30), () -> System.nanoTime() > end || !lock.isHeld());
    assertTrue(lock.isHeld(), "lost although it heartbeat");
    assertEquals(List.of(new Holder("writer", READ, lock.token())), await(locks.state("long")).holders());
    failure(lock.downgrade(), 400, "bad_request");
    assertTrue(lock.isHeld(), "a refused downgrade is no loss");
    await(lock.release());
    assertEquals(List.of(), await(locks.state("long")).holders());
    assertFalse(lock.lost().isComplete(), "a release is no loss");
  }

  @Test
  void aLockReleasedBehindItsBackIsReportedLost() {
    ClientReadWriteLock lock = await(locks.lock("taken", WRITE));
    await(locks.release("taken", lock.owner(), lock.token(), WRITE));
    ClientReadWriteLock next = await(locks.lock("taken", WRITE));
    assertEquals(lock.token(), lost(lock.lost(), "the write lock"));
    assertFalse(lock.isHeld());
    failure(lock.release(), 409, "not_held");
    failure(lock.downgrade(), 409, "not_held");
    assertTrue(next.token().isNewerThan(lock.token()));
    await(next.release());
  }

  /**
   * Ten owners take the lock five times each, every third time to write: never a writer with anyone else, several
   * readers at once, each writer's token newer than every grant released before it asked.
   */
  @Test
  void manyContendersNeverLetAWriterInWithOthers() {
    int contenders = 10;
    int rounds = 5;
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    AtomicInteger mostReaders = new AtomicInteger();
    Set<ReadWriteToken> tokens = new HashSet<>();
    AtomicReference<ReadWriteToken> newestReleased = new AtomicReference<>();
    LockOptions options = new LockOptions().setTimeout(Duration.ofSeconds(45));
    TypedClients.runAll(vertx, contenders, c -> TypedClients.repeat(rounds, round -> {
      ReadWriteLockClient.Mode mode = (c + round) % 3 == 0 ? WRITE : READ;
      ReadWriteToken before = newestReleased.get();
      return locks.lock("shared", mode, options).compose(lock -> {
        synchronized (tokens) {
          int r = mode == READ ? readers.incrementAndGet() : readers.get();
          int w = mode == WRITE ? writers.incrementAndGet() : writers.get();
          mostReaders.accumulateAndGet(r, Math::max);
          assertTrue(tokens.add(lock.token()), () -> "token " + lock.token() + " granted twice");
          assertTrue(w == 0 || (w == 1 && r == 0), () -> w + " writers with " + r + " readers");
        }
        assertTrue(before == null || lock.token().isNewerThan(before),
            () -> lock.token() + " not newer than " + before);
        return TypedClients.briefly(vertx).compose(v -> {
          assertTrue(lock.isHeld(), "lost during the round");
          newestReleased.accumulateAndGet(lock.token(), (a, b) -> a == null || b.isNewerThan(a) ? b : a);
          synchronized (tokens) {
            (mode == READ ? readers : writers).decrementAndGet();
          }
          return lock.release();
        });
      });
    }));
    assertEquals(contenders * rounds, tokens.size());
    assertTrue(mostReaders.get() > 1, "readers never shared the lock: the test checked nothing");
    assertEquals(new State("shared", List.of(), List.of()), await(locks.state("shared")));
  }
}
