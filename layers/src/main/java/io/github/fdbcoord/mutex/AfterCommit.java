package io.github.fdbcoord.mutex;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A transaction's result that may depend on the commit's versionstamp, known only once the commit
 * succeeded. The transaction body returns it; {@link #resolve()} is called after the retry loop.
 */
final class AfterCommit<T> {
  private final T ready;
  private final CompletableFuture<byte[]> versionstamp;
  private final Function<byte[], T> fromVersionstamp;

  private AfterCommit(T ready, CompletableFuture<byte[]> versionstamp, Function<byte[], T> fromVersionstamp) {
    this.ready = ready;
    this.versionstamp = versionstamp;
    this.fromVersionstamp = fromVersionstamp;
  }

  static <T> AfterCommit<T> now(T value) {
    return new AfterCommit<>(value, null, null);
  }

  /** {@code versionstamp} must be the attempt's {@code tr.getVersionstamp()}, taken before commit. */
  static <T> AfterCommit<T> stamped(CompletableFuture<byte[]> versionstamp, Function<byte[], T> f) {
    return new AfterCommit<>(null, versionstamp, f);
  }

  <U> AfterCommit<U> map(Function<T, U> f) {
    return versionstamp == null ? now(f.apply(ready)) : stamped(versionstamp, fromVersionstamp.andThen(f));
  }

  CompletableFuture<T> resolve() {
    return versionstamp == null ? CompletableFuture.completedFuture(ready) : versionstamp.thenApply(fromVersionstamp);
  }
}
