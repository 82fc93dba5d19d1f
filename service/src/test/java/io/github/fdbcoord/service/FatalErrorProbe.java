package io.github.fdbcoord.service;

import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.github.fdbcoord.service.eventbus.StoreWorkers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

/**
 * Run in a child JVM by {@link CoordinationMainTest}: installs the stand-alone main's fatal-error
 * handler, then lets an OutOfMemoryError happen the way {@code args[0]} says. Prints "survived"
 * and exits 0 if the process is still alive two seconds later.
 */
public final class FatalErrorProbe {
  private FatalErrorProbe() {}

  public static void main(String[] args) throws Exception {
    CoordinationMain.installFatalErrorHandler();
    switch (args[0]) {
      case "thread":
        // Reaches the top of a thread.
        new Thread(() -> {
          throw new OutOfMemoryError("probe: Java heap space");
        }, "probe").start();
        break;
      case "reply":
        // Caught by a store call's future on a worker, then turned into a reply failure.
        var pool = Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, StoreWorkers.THREAD_PREFIX + "probe");
          t.setDaemon(true);
          return t;
        });
        CompletableFuture.supplyAsync(() -> {
          throw new OutOfMemoryError("probe: Java heap space");
        }, pool).whenComplete((v, e) -> System.out.println("reply " + FailureCodes.of(e).getMessage()));
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    Thread.sleep(2_000);
    System.out.println("survived");
    System.exit(0);
  }
}
