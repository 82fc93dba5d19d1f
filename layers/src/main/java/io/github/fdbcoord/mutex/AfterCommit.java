package io.github.fdbcoord.mutex;

import java.util.List;
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

  /**
   * The results of several parts of one transaction attempt, in order; {@code versionstamp} is the attempt's
   * {@code tr.getVersionstamp()}, which every stamped part was given too.
   */
  static <T> AfterCommit<List<T>> all(List<AfterCommit<T>> parts, CompletableFuture<byte[]> versionstamp) {
    if (parts.stream().allMatch(p -> p.versionstamp == null)) {
      return now(parts.stream().map(p -> p.ready).toList());
    }
    return stamped(versionstamp, vs -> parts.stream()
        .map(p -> p.versionstamp == null ? p.ready : p.fromVersionstamp.apply(vs)).toList());
  }

  CompletableFuture<T> resolve() {
    return versionstamp == null ? CompletableFuture.completedFuture(ready) : versionstamp.thenApply(fromVersionstamp);
  }
}
