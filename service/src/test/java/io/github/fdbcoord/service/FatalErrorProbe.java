package io.github.fdbcoord.service;

import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.github.fdbcoord.service.eventbus.StoreWorkers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;

/**
 * Run in a child JVM by {@link CoordinationMainTest}: installs the stand-alone main's fatal-error
 * handler, then lets an OutOfMemoryError happen the way {@code args[0]} says. Prints "survived"
 * and exits 0 if the process is still alive once the error was handled: the handler halts on the
 * thread that met the error, before that thread ends or its future completes. (It used to wait two
 * seconds, which a loaded machine spent before the worker had even run: "survived" then.)
 */
public final class FatalErrorProbe {
  private FatalErrorProbe() {}

  public static void main(String[] args) throws Exception {
    CoordinationMain.installFatalErrorHandler();
    switch (args[0]) {
      case "thread":
        // Reaches the top of a thread.
        Thread probe = new Thread(() -> {
          throw new OutOfMemoryError("probe: Java heap space");
        }, "probe");
        probe.start();
        probe.join();
        break;
      case "reply":
        // Caught by a store call's future on a worker, then turned into a reply failure.
        var pool = Executors.newSingleThreadExecutor(r -> {
          Thread t = new Thread(r, StoreWorkers.THREAD_PREFIX + "probe");
          t.setDaemon(true);
          return t;
        });
        CompletableFuture<Object> replied = CompletableFuture.supplyAsync(() -> {
          throw new OutOfMemoryError("probe: Java heap space");
        }, pool).whenComplete((v, e) -> System.out.println("reply " + FailureCodes.of(e).getMessage()));
        try {
          replied.join();
        } catch (CompletionException expected) {
          // the error itself, once the reply was made of it
        }
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    System.out.println("survived");
    System.exit(0);
  }
}
