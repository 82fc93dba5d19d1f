package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * What a record's future fails with when the commit log had already failed as the record was appended:
 * the log refused it, so it was neither queued nor written and its commit did not happen. The records
 * that the failure caught on their way to the disk fail with a plain {@link UncheckedIOException}
 * instead: they may be on the disk.
 */
public final class LogFailedException extends UncheckedIOException {
  LogFailedException(Path dir, IOException cause) {
    super("commit log " + dir + " failed earlier (" + GroupCommitWriter.describe(cause) + "); the record was not written", cause);
  }
}
