package io.github.fdbcoord.embedded;

import java.util.concurrent.CompletableFuture;

/** Where the engine makes commits durable: appends in version order, each acknowledged once on disk. */
interface DurableLog {
  /** Completes once this record and every earlier one are durable. Called under the commit lock. */
  CompletableFuture<Void> append(long version, byte[] payload);

  void close();
}
