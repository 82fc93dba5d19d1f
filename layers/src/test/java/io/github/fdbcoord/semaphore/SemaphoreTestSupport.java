package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.testsupport.LayerTestSupport;

import java.time.Duration;

/** The semaphore tests' options and services, over {@link LayerTestSupport}. */
abstract class SemaphoreTestSupport extends LayerTestSupport<SemaphoreService> {
  SemaphoreTestSupport() {
    super("semaphore");
  }

  /** Reaper off, long lease: nothing expires by itself. */
  static SemaphoreOptions.Builder quiet() {
    return SemaphoreOptions.builder().reaperEnabled(false).lease(Duration.ofSeconds(30))
        .heartbeatInterval(Duration.ofSeconds(1));
  }

  /** Where expiry is the subject: lease 2 s, heartbeat every 200 ms, reaper every 50 ms. */
  static SemaphoreOptions.Builder expiring() {
    return SemaphoreOptions.builder().lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(200))
        .reaperInterval(Duration.ofMillis(50));
  }

  FdbSemaphoreService service(SemaphoreOptions.Builder options) {
    FdbSemaphoreService s = (FdbSemaphoreService) SemaphoreService.create(db, root, options.build());
    return track(s);
  }
}
