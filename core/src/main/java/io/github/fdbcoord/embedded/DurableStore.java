package io.github.fdbcoord.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;

/** Opens an engine: in memory, or recovered from its data directory's commit log. */
final class DurableStore {
  private DurableStore() {}

  static Engine open(EmbeddedOptions options) {
    VersionedStore store = new VersionedStore();
    if (options.dataDirectory() == null) {
      return new Engine(options, store, null, 0);
    }
    CommitLog log;
    try {
      log = CommitLog.open(options.files(), options.dataDirectory(), new CommitLog.Replay() {
        @Override
        public void snapshotEntry(byte[] key, byte[] value) {
          store.replaySet(key, value, 0);
        }

        @Override
        public void record(long version, byte[] payload) {
          Engine.replay(store, version, payload);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the data directory " + options.dataDirectory() + ": "
          + e.getMessage(), e);
    }
    return new Engine(options, store, log, log.recoveredVersion());
  }
}
