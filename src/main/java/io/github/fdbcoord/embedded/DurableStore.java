package io.github.fdbcoord.embedded;

/** Opens an engine, in memory or recovered from its data directory. */
final class DurableStore {
  private DurableStore() {}

  static Engine open(EmbeddedOptions options) {
    if (options.dataDirectory() == null) {
      return new Engine(options, null, 0);
    }
    throw new UnsupportedOperationException("durable data directories are not wired in yet");
  }
}
