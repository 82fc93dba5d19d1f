package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.testsupport.LayerTestSupport;

import java.time.Duration;
import java.util.List;

/** The read-write lock tests' options and services, over {@link LayerTestSupport}. */
abstract class ReadWriteLockTestSupport extends LayerTestSupport<ReadWriteLockService> {
  ReadWriteLockTestSupport() {
    super("rwlock");
  }

  /** Reaper off, long lease: nothing expires by itself. */
  static ReadWriteLockOptions.Builder quiet() {
    return ReadWriteLockOptions.builder().reaperEnabled(false).lease(Duration.ofSeconds(30)).heartbeatInterval(Duration.ofSeconds(1));
  }

  /** Expiry is the subject: lease 2 s, heartbeat every 200 ms, reaper every 100 ms. */
  static ReadWriteLockOptions.Builder expiring() {
    return ReadWriteLockOptions.builder().lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(200))
        .reaperInterval(Duration.ofMillis(100));
  }

  FdbReadWriteLockService service(ReadWriteLockOptions.Builder options) {
    FdbReadWriteLockService s = (FdbReadWriteLockService) ReadWriteLockService.create(db, root, options.build());
    return track(s);
  }

  /** The owners of the queue of {@code lock}, head first. */
  static List<String> queue(ReadWriteLockService s, String lock) {
    return await(s.state(lock)).queue().stream().map(ReadWriteLockState.Request::owner).toList();
  }

  static List<String> holders(ReadWriteLockService s, String lock) {
    return await(s.state(lock)).holders().stream().map(ReadWriteGrant::owner).toList();
  }
}
