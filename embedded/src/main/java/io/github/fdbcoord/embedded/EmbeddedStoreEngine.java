package io.github.fdbcoord.embedded;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.EmbeddedEngine;
import io.github.fdbcoord.store.StoreOptions;

import java.util.concurrent.Executor;

/** Opens this engine for {@code Store.open}: registered in {@code META-INF/services}. */
public final class EmbeddedStoreEngine implements EmbeddedEngine {
  @Override
  public Database open(StoreOptions options, Executor executor) {
    EmbeddedOptions.Builder builder = EmbeddedOptions.builder().latency(options.latency()).executor(executor)
        .storageCacheBytes(options.storageCacheBytes()).minFreeSpaceBytes(options.minFreeSpaceBytes())
        .verifyChecksumsAtOpen(options.verifyChecksumsAtOpen()).scrubInterval(options.scrubInterval())
        .scrubBytesPerSecond(options.scrubBytesPerSecond());
    if (options.dataDirectory() != null) {
      builder.dataDirectory(options.dataDirectory());
    }
    return EmbeddedDatabase.open(builder.build());
  }
}
