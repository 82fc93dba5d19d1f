package io.github.fdbcoord.embedded.client;

import com.apple.foundationdb.async.AsyncIterable;
import com.apple.foundationdb.async.AsyncIterator;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/** FoundationDB's "operation not supported" answer, for tenants, blob granules and mapped ranges. */
public final class Unsupported {
  private Unsupported() {}

  public static <T> CompletableFuture<T> future() {
    return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION));
  }

  static <T> AsyncIterable<T> iterable(Executor executor) {
    return new AsyncIterable<>() {
      @Override
      public AsyncIterator<T> iterator() {
        return new AsyncIterator<>() {
          @Override
          public CompletableFuture<Boolean> onHasNext() {
            return future();
          }

          @Override
          public boolean hasNext() {
            throw new CompletionException(FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION));
          }

          @Override
          public T next() {
            throw new NoSuchElementException();
          }

          @Override
          public void cancel() {
          }
        };
      }

      @Override
      public CompletableFuture<List<T>> asList() {
        return future();
      }
    };
  }
}
