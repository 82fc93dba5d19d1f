package io.github.fdbcoord.semaphore;

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

/**
 * One in-memory embedded database per test class; each test gets its own random directory (removed afterwards) and
 * closes the services it opened.
 */
abstract class SemaphoreTestSupport {
  static Database db;
  DirectorySubspace root;
  List<String> path;
  private final List<SemaphoreService> services = new ArrayList<>();

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
    path = List.of("test", "semaphore-" + UUID.randomUUID());
    root = DirectoryLayer.getDefault().createOrOpen(db, path).join();
  }

  @AfterEach
  void removeDirectory() {
    for (SemaphoreService s : services) {
      s.close();
    }
    DirectoryLayer.getDefault().removeIfExists(db, path).join();
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
    services.add(s);
    return s;
  }

  static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new CompletionException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError("operation did not complete in 30 s", e);
    }
  }

  /** The exception {@code f} fails with (unwrapped), failing the test if it succeeds. */
  static <X extends Throwable> X failure(Class<X> type, CompletableFuture<?> f) {
    try {
      Object v = f.get(30, TimeUnit.SECONDS);
      return fail("expected " + type.getSimpleName() + " but completed with " + v);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
          ? e.getCause().getCause() : e.getCause();
      assertTrue(type.isInstance(cause), "expected " + type.getSimpleName() + " but got " + cause);
      return type.cast(cause);
    } catch (Exception e) {
      return fail("expected " + type.getSimpleName() + " but got " + e);
    }
  }

  /** Waits for {@code condition}, checked every 10 ms, failing with {@code what} after {@code within}. */
  static void eventually(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("not within " + within + ": " + what);
      }
      Thread.sleep(10);
    }
  }
}
