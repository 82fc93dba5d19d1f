package io.github.fdbcoord.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

class FencingGateTest {
  private static FencingToken token(long version) {
    return FencingToken.of(ByteBuffer.allocate(FencingToken.LENGTH).putLong(version).putShort((short) 0).array());
  }

  @Test
  void admitsTheSameOrANewerTokenAndRefusesAnOlderOne() {
    FencingGate gate = new FencingGate();
    assertEquals(Optional.empty(), gate.newest());
    assertTrue(gate.admit(token(10)));
    assertTrue(gate.admit(token(10)), "the holder writes again under its own token");
    assertTrue(gate.admit(token(11)));
    assertFalse(gate.admit(token(10)), "the replaced holder's token is refused once its successor wrote");
    assertEquals(Optional.of(token(11)), gate.newest());
  }

  @Test
  void aStaleWriteDoesNotRunAndSaysWhichTokensMet() {
    FencingGate gate = new FencingGate(token(20));
    List<String> writes = new ArrayList<>();
    assertEquals("b", gate.apply(token(21), () -> {
      writes.add("b");
      return "b";
    }));
    FencingGate.StaleTokenException e = assertThrows(FencingGate.StaleTokenException.class,
        () -> gate.apply(token(20), () -> writes.add("a")));
    assertEquals(List.of("b"), writes);
    assertEquals(token(20), e.refused());
    assertEquals(token(21), e.newest());
    assertEquals(FailureKind.NOT_OWNER, e.failureKind());
    assertTrue(e.getMessage().contains(token(20).toString()) && e.getMessage().contains(token(21).toString()),
        e.getMessage());
  }

  @Test
  void concurrentWritersNeverApplyAnOlderTokenAfterANewerOne() throws Exception {
    FencingGate gate = new FencingGate();
    List<Long> applied = Collections.synchronizedList(new ArrayList<>());
    int threads = 8;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> writers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      writers.add(new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < 2_000; i++) {
          long version = ThreadLocalRandom.current().nextLong(1_000);
          try {
            gate.apply(token(version), () -> applied.add(version));
          } catch (FencingGate.StaleTokenException refused) {
            // counted below: every refusal was older than something applied
          }
        }
      }));
    }
    writers.forEach(Thread::start);
    start.countDown();
    for (Thread w : writers) {
      w.join();
    }
    assertFalse(applied.isEmpty());
    for (int i = 1; i < applied.size(); i++) {
      assertTrue(applied.get(i) >= applied.get(i - 1), "write " + i + " under " + applied.get(i)
          + " applied after one under " + applied.get(i - 1));
    }
    assertEquals(Optional.of(token(applied.get(applied.size() - 1))), gate.newest());
  }
}
