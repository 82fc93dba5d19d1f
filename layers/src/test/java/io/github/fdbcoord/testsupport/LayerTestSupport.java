package io.github.fdbcoord.testsupport;

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
 * For the tests of a layer's service: one in-memory embedded database per test class; each test gets its own random
 * directory (removed afterwards) and closes the services it opened through {@link #track}.
 *
 * @param <S> the layer's service
 */
public abstract class LayerTestSupport<S extends AutoCloseable> {
  /** How long {@link #await} and {@link #failure} wait for a future: far above any answer on a loaded machine. */
  private static final int ANSWER_SECONDS = 60;

  protected static Database db;
  protected DirectorySubspace root;
  protected List<String> path;
  private final String directoryPrefix;
  private final List<S> services = new ArrayList<>();

  /** {@code directoryPrefix} starts the name of each test's directory under {@code ["test"]}. */
  protected LayerTestSupport(String directoryPrefix) {
    this.directoryPrefix = directoryPrefix;
  }

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
    path = List.of("test", directoryPrefix + "-" + UUID.randomUUID());
    root = DirectoryLayer.getDefault().createOrOpen(db, path).join();
  }

  @AfterEach
  void removeDirectory() throws Exception {
    for (S s : services) {
      s.close();
    }
    DirectoryLayer.getDefault().removeIfExists(db, path).join();
  }

  /** {@code service}, closed after the test. */
  protected <T extends S> T track(T service) {
    services.add(service);
    return service;
  }

  /** The value of {@code f}, its failure rethrown unwrapped (a checked one in a CompletionException). */
  public static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(ANSWER_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new CompletionException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError("operation did not complete in " + ANSWER_SECONDS + " s", e);
    }
  }

  /** The exception {@code f} fails with (unwrapped), failing the test if it succeeds. */
  public static <X extends Throwable> X failure(Class<X> type, CompletableFuture<?> f) {
    try {
      Object v = f.get(ANSWER_SECONDS, TimeUnit.SECONDS);
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

  /** Waits for {@code condition}, checked every 5 ms, failing with {@code what} after {@code within}. */
  public static void eventually(String what, Duration within, BooleanSupplier condition) {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("not within " + within + ": " + what);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting: " + what, e);
      }
    }
  }
}
