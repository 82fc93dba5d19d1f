package io.github.fdbcoord.conformance;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** Waiting on engine futures without hanging the suite, and asserting FoundationDB error codes. */
public final class FdbAssertions {
  /** No single engine operation in this suite should take longer; a hang is reported as a failure. */
  public static final long TIMEOUT_SECONDS = 15;

  private FdbAssertions() {}

  /** The future's value; its failure is rethrown as is (FDBException or the cause). */
  public static <T> T await(CompletableFuture<T> f) {
    return await(f, TIMEOUT_SECONDS);
  }

  /** The future's value within {@code seconds}; its failure is rethrown as is. */
  public static <T> T await(CompletableFuture<T> f, long seconds) {
    try {
      return f.get(seconds, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IllegalStateException(cause);
    } catch (TimeoutException e) {
      return fail("engine future did not complete within " + seconds + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Asserts that the future fails with FoundationDB error {@code code}. */
  public static void assertFdbError(int code, CompletableFuture<?> f) {
    assertFdbError(code, f, TIMEOUT_SECONDS);
  }

  /** Asserts that the future fails with FoundationDB error {@code code} within {@code seconds}. */
  public static void assertFdbError(int code, CompletableFuture<?> f, long seconds) {
    Object value;
    try {
      value = f.get(seconds, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      assertCode(code, e.getCause());
      return;
    } catch (TimeoutException e) {
      fail("expected FDB error " + code + " but the future did not complete within " + seconds + " s");
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    fail("expected FDB error " + code + " (" + FdbErrors.message(code) + ") but got value " + describe(value));
  }

  /**
   * Asserts that the call fails with {@code code}, either by throwing at the call or through the
   * future it returns (for calls where FoundationDB's client may do either).
   */
  public static void assertFdbErrorEitherWay(int code, Supplier<CompletableFuture<?>> call) {
    CompletableFuture<?> f;
    try {
      f = call.get();
    } catch (RuntimeException e) {
      assertCode(code, e);
      return;
    }
    assertFdbError(code, f);
  }

  public static void assertCode(int code, Throwable t) {
    assertCode(code, t, "");
  }

  /** Asserts that {@code t} is (or wraps) FDB error {@code code}; {@code what} names the call in a failure. */
  public static void assertCode(int code, Throwable t, String what) {
    FDBException e = FdbErrors.fdbException(t);
    if (e == null) {
      throw new AssertionError(what + ": expected FDBException " + code + " (" + FdbErrors.message(code) + ") but got " + t, t);
    }
    assertEquals(code, e.getCode(), () -> what + ": wrong FDB error code; message: " + e.getMessage());
  }

  /** Whether the future completes (normally or not) within {@code millis}. */
  public static boolean completesWithin(CompletableFuture<?> f, long millis) {
    try {
      f.get(millis, TimeUnit.MILLISECONDS);
      return true;
    } catch (ExecutionException e) {
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static List<String> keys(List<KeyValue> kvs, int stripPrefix) {
    return kvs.stream()
        .map(kv -> Fixture.string(java.util.Arrays.copyOfRange(kv.getKey(), stripPrefix, kv.getKey().length)))
        .collect(Collectors.toList());
  }

  static String describe(Object value) {
    if (value instanceof byte[]) {
      return hex((byte[]) value);
    }
    return String.valueOf(value);
  }

  public static String hex(byte[] b) {
    if (b == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < b.length && i < 64; i++) {
      sb.append(String.format("%02x", b[i] & 0xff));
    }
    if (b.length > 64) {
      sb.append("...(").append(b.length).append(" bytes)");
    }
    return sb.append(']').toString();
  }
}
