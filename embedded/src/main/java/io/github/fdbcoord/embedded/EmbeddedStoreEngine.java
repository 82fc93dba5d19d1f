package io.github.fdbcoord.embedded;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.EmbeddedEngine;
import io.github.fdbcoord.store.StoreOptions;

import java.util.concurrent.Executor;

/** Opens this engine for {@code Store.open}: registered in {@code META-INF/services}. */
public final class EmbeddedStoreEngine implements EmbeddedEngine {
  @Override
  public Database open(StoreOptions options, Executor executor) {
    return EmbeddedDatabase.open(EmbeddedOptions.builder(options).executor(executor).build());
  }
}
