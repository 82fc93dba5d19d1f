package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Transaction;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** A transaction's result, possibly known only from the commit's versionstamp. */
record Stamped<T>(T value, CompletableFuture<byte[]> versionstamp, Function<byte[], T> fromVersionstamp) {
  static <T> Stamped<T> now(T value) {
    return new Stamped<>(value, null, null);
  }

  /** A result made from {@code tr}'s versionstamp once it commits (only for a transaction that writes one). */
  static <T> Stamped<T> after(Transaction tr, Function<byte[], T> f) {
    return new Stamped<>(null, tr.getVersionstamp(), f);
  }

  CompletableFuture<T> resolve() {
    return versionstamp == null ? CompletableFuture.completedFuture(value) : versionstamp.thenApply(fromVersionstamp);
  }
}
