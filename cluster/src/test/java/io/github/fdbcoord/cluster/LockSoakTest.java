package io.github.fdbcoord.cluster;

import io.github.fdbcoord.bench.LockSoak;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No decay under sustained use (issue 24): two minutes of one node looping a SharedData lock's
 * acquire + release on the in-memory engine, and the last 10 s window must still reach half the
 * cycles/s of the first after warm-up. The mutex layer once range-cleared its event log on every
 * transition, and the rate then fell from thousands to tens of cycles/s after the first minute.
 */
@Tag("slow")
class LockSoakTest {
  private static final Duration WARM_UP = Duration.ofSeconds(10);
  private static final Duration WINDOW = Duration.ofSeconds(10);

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void lockCyclesDoNotDecayOverTwoMinutes() throws Exception {
    try (EmbeddedDatabase db = EmbeddedDatabase.inMemory(); LockSoak soak = LockSoak.start(db)) {
      soak.run(WARM_UP, WARM_UP, w -> {});
      List<LockSoak.Window> windows = soak.run(Duration.ofMinutes(2), WINDOW,
          w -> System.out.printf(Locale.ROOT, "window %d: %.0f cycles/s, other lock %.1f ms, live heap %d MB%n",
              w.index(), w.cyclesPerSecond(), w.otherLockMillis(), w.heapMb()));
      double first = windows.get(0).cyclesPerSecond();
      double last = windows.get(windows.size() - 1).cyclesPerSecond();
      assertTrue(first > 0, "no cycle in the first window");
      assertTrue(last >= first / 2, String.format(Locale.ROOT,
          "the last window's %.0f cycles/s fell below half the first's %.0f: %s", last, first, windows));
    }
  }
}
