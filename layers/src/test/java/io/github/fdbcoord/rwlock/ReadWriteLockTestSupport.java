package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** One in-memory embedded database per test class; each test gets its own directory and closes its services. */
abstract class ReadWriteLockTestSupport {
  static Database db;
  DirectorySubspace root;
  List<String> path;
  private final List<ReadWriteLockService> services = new ArrayList<>();

  @BeforeAll
  static void openDatabase() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void createDirectory() {
    path = List.of("test", "rwlock-" + UUID.randomUUID());
    root = DirectoryLayer.getDefault().createOrOpen(db, path).join();
  }

  @AfterEach
  void removeDirectory() {
    for (ReadWriteLockService s : services) {
      s.close();
    }
    DirectoryLayer.getDefault().removeIfExists(db, path).join();
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
    services.add(s);
    return s;
  }

  static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new CompletionException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError("operation did not complete in 60 s", e);
    }
  }

  /** The exception {@code f} fails with (unwrapped), failing the test if it succeeds. */
  static <X extends Throwable> X failure(Class<X> type, CompletableFuture<?> f) {
    try {
      Object v = f.get(60, TimeUnit.SECONDS);
      return fail("expected " + type.getSimpleName() + " but completed with " + v);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null ? e.getCause().getCause() : e.getCause();
      assertTrue(type.isInstance(cause), "expected " + type.getSimpleName() + " but got " + cause);
      return type.cast(cause);
    } catch (Exception e) {
      return fail("expected " + type.getSimpleName() + " but got " + e);
    }
  }

  /** Waits for {@code condition} (polling; no sleep stands for the condition itself). */
  static void eventually(String what, Duration within, BooleanSupplier condition) {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("not within " + within + ": " + what);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /** The owners of the queue of {@code lock}, head first. */
  static List<String> queue(ReadWriteLockService s, String lock) {
    return await(s.state(lock)).queue().stream().map(ReadWriteLockState.Request::owner).toList();
  }

  static List<String> holders(ReadWriteLockService s, String lock) {
    return await(s.state(lock)).holders().stream().map(ReadWriteGrant::owner).toList();
  }
}
