package io.github.fdbcoord.embedded.engine;

/** The applier's steps that crash tests stop a process at (see {@link ApplyObserver}). */
public enum ApplyStep {
  /** A batch is in RocksDB (not flushed); its versions are still in the window. */
  WRITTEN,
  /** One chunk of the batch's chains has left the window. */
  EVICTED
}
