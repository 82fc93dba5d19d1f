package io.github.fdbcoord.mutex;

import io.github.fdbcoord.testsupport.LayerTestSupport;

import java.time.Duration;

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
}
