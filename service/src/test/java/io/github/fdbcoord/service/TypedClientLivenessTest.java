package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.ElectionClient;
import io.github.fdbcoord.client.ReadWriteLockClient;
import io.github.fdbcoord.client.SemaphoreClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.test.fakecluster.FakeClusterManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.client.ReadWriteLockClient.Mode.WRITE;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The typed election, semaphore and read-write lock clients carry their Vert.x instance's liveness address with a
 * waiting acquire (or campaign): when that instance closes mid-wait (its node leaves the cluster), the serving node
 * takes its waiters out of the queues, well before their own timeouts, and the next live waiter is served.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TypedClientLivenessTest {
  private static final Duration LONG_WAIT = Duration.ofSeconds(40);

  @Test
  void theWaitersOfAClosedClientLeaveTheQueues() throws Exception {
    Vertx host = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    Vertx requester = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    try {
      ServiceFixture f = ServiceFixture.start(host, TypedClients.config(), null);
      CoordinationClient local = CoordinationClient.create(host);
      CoordinationClient remote = CoordinationClient.create(requester);
      ElectionClient.Leadership leader = await(local.elections().campaign("e", "leader", Duration.ofSeconds(5)));
      SemaphoreClient.Permit permit = await(local.semaphores().acquire("s", "holder", 1, Duration.ofSeconds(5)));
      ReadWriteLockClient.Grant writer = await(local.readWriteLocks().acquire("l", "writer", WRITE,
          Duration.ofSeconds(5)));
      // The holders keep their grants by heartbeats while the waiters wait.
      long beat = host.setPeriodic(500, id -> {
        local.elections().heartbeat("e", "leader", leader.epoch());
        local.semaphores().heartbeat("s", "holder", permit.token());
        local.readWriteLocks().heartbeat("l", "writer", writer.token(), WRITE);
      });

      remote.elections().campaign("e", "remote", LONG_WAIT);
      remote.semaphores().acquire("s", "remote", 1, LONG_WAIT);
      remote.readWriteLocks().acquire("l", "remote", WRITE, LONG_WAIT);
      // The closed client's waiters first in line: the live ones are served only if they really left.
      eventually("the remote waiters in line", Duration.ofSeconds(20), () -> electionLine(f).equals(List.of("remote"))
          && semaphoreLine(local).equals(List.of("remote")) && lockLine(local).equals(List.of("remote")),
          () -> electionLine(f) + " " + semaphoreLine(local) + " " + lockLine(local));
      Future<ElectionClient.Leadership> nextLeader = local.elections().campaign("e", "live", LONG_WAIT);
      Future<SemaphoreClient.Permit> nextPermit = local.semaphores().acquire("s", "live", 1, LONG_WAIT);
      Future<ReadWriteLockClient.Grant> nextWriter = local.readWriteLocks().acquire("l", "live", WRITE, LONG_WAIT);
      eventually("all waiters in line", Duration.ofSeconds(20), () -> electionLine(f).equals(List.of("remote", "live"))
          && semaphoreLine(local).equals(List.of("remote", "live"))
          && lockLine(local).equals(List.of("remote", "live")),
          () -> electionLine(f) + " " + semaphoreLine(local) + " " + lockLine(local));

      long closed = System.nanoTime();
      await(requester.close()); // its waits can never be answered: its node left
      eventually("the closed client's waiters left the lines", Duration.ofSeconds(20),
          () -> electionLine(f).equals(List.of("live")) && semaphoreLine(local).equals(List.of("live"))
              && lockLine(local).equals(List.of("live")),
          () -> electionLine(f) + " " + semaphoreLine(local) + " " + lockLine(local));
      long goneMs = (System.nanoTime() - closed) / 1_000_000;
      assertEquals(true, goneMs < LONG_WAIT.toMillis() / 2, () -> "removed " + goneMs + " ms after its client closed");

      host.cancelTimer(beat);
      await(local.elections().resign("e", "leader", leader.epoch()));
      await(local.semaphores().release("s", "holder", permit.token()));
      await(local.readWriteLocks().release("l", "writer", writer.token(), WRITE));
      assertEquals("live", await(nextLeader).candidate(), "the live candidate leads, not the gone one");
      assertEquals("live", await(nextPermit).owner());
      assertEquals("live", await(nextWriter).owner());
      f.close();
    } finally {
      await(host.close());
      requester.close();
      FakeClusterManager.reset();
    }
  }

  private static List<String> electionLine(ServiceFixture f) {
    return await(f.client.mutexState("e")).queue().stream().map(q -> q.owner()).toList();
  }

  private static List<String> semaphoreLine(CoordinationClient c) {
    return await(c.semaphores().state("s")).waiters();
  }

  private static List<String> lockLine(CoordinationClient c) {
    return await(c.readWriteLocks().state("l")).queue().stream().map(ReadWriteLockClient.Waiter::owner).toList();
  }
}
