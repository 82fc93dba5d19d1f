package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MutexService#inspect}: the dashboard's view of one mutex (age of the grant, lease left, queue). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MutexInspectionTest extends MutexTestSupport {
  private static final long TOLERANCE_MS = 5;

  @Test
  void ageOfTheGrantAndLeaseLeftFollowTheClockAndHeartbeats() throws InterruptedException {
    MutexService s = service(MutexOptions.builder().lease(Duration.ofMillis(3000))
        .heartbeatInterval(Duration.ofMillis(300)).reaperInterval(Duration.ofMillis(20)));
    MutexInspection free = await(s.inspect("m"));
    assertEquals(Optional.empty(), free.state().owner());
    assertEquals(Optional.empty(), free.heldFor());
    assertEquals(Optional.empty(), free.leaseLeft());

    long beforeGrant = System.nanoTime();
    AcquireResult a = await(s.tryAcquire("m", "a"));
    long afterGrant = System.nanoTime();
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    Thread.sleep(500);

    long beforeInspect = System.nanoTime();
    MutexInspection held = await(s.inspect("m"));
    long afterInspect = System.nanoTime();
    assertEquals("a", held.state().owner().orElseThrow().owner());
    assertEquals(a.token().orElseThrow(), held.state().owner().orElseThrow().token());
    assertEquals(List.of("b", "c"), held.state().queue().stream().map(QueueEntry::owner).toList());
    long heldMs = held.heldFor().orElseThrow().toMillis();
    assertTrue(heldMs >= ms(beforeInspect - afterGrant) - TOLERANCE_MS, "held " + heldMs + " ms, at least the time slept");
    assertTrue(heldMs <= ms(afterInspect - beforeGrant) + TOLERANCE_MS, "held " + heldMs + " ms, at most the time elapsed");
    // The reaper has watched the unchanged record for most of the 500 ms (it scans every 20 ms).
    long leftMs = held.leaseLeft().orElseThrow().toMillis();
    // The reaper starts counting at its first scan that sees the record (every 20 ms; later on a
    // loaded machine): until then the whole lease is left.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (leftMs == 3000 && System.nanoTime() < deadline) {
      Thread.sleep(20);
      leftMs = await(s.inspect("m")).leaseLeft().orElseThrow().toMillis();
    }
    assertTrue(leftMs < 3000, "lease left " + leftMs + " ms after 500 ms without heartbeat");
    assertTrue(leftMs >= 3000 - ms(System.nanoTime() - beforeGrant), "lease left " + leftMs + " ms");
    // It counts down while nothing changes (however late a loaded machine ran the reaper's scans).
    Thread.sleep(200);
    long laterMs = await(s.inspect("m")).leaseLeft().orElseThrow().toMillis();
    assertTrue(laterMs <= leftMs - 150, "lease left " + laterMs + " ms, 200 ms after " + leftMs + " ms");

    // A heartbeat changes the record: the reaper counts a new lease from when it sees it.
    long beforeHeartbeat = System.nanoTime();
    await(s.heartbeat("m", "a"));
    MutexInspection fresh = await(s.inspect("m"));
    long afterFresh = System.nanoTime();
    long freshLeft = fresh.leaseLeft().orElseThrow().toMillis();
    assertTrue(freshLeft >= 3000 - ms(afterFresh - beforeHeartbeat) - TOLERANCE_MS && freshLeft > leftMs,
        "lease left after a heartbeat: " + freshLeft + " ms (before: " + leftMs + " ms)");
    assertEquals(a.token().orElseThrow(), fresh.state().owner().orElseThrow().token(), "same grant");
    assertTrue(fresh.heldFor().orElseThrow().toMillis() >= heldMs, "the grant keeps ageing across heartbeats");
  }

  @Test
  void noReaperNoLeaseLeft() {
    MutexService s = service(quiet());
    await(s.tryAcquire("q", "a"));
    MutexInspection i = await(s.inspect("q"));
    assertTrue(i.heldFor().isPresent());
    assertEquals(Optional.empty(), i.leaseLeft(), "without a reaper in this service nobody counts the lease here");
  }

  @Test
  void badNameIsRefused() {
    MutexService s = service(quiet());
    org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> s.inspect(""));
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
