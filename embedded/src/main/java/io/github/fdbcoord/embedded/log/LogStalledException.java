package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * What a record's future fails with when the commit log ran out of disk space before the record was
 * synced: the log keeps the record and writes it once space is back, so the commit may yet become
 * durable (FoundationDB's commit_unknown_result), and the log is not failed.
 */
public final class LogStalledException extends UncheckedIOException {
  LogStalledException(Path dir, IOException cause) {
    super("commit log " + dir + " is out of disk space (" + cause.getMessage() + "); the record is written once"
        + " space is freed", cause);
  }
}
