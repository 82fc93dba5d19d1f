package io.github.fdbcoord.embedded;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A finished backup ({@link EmbeddedDatabase#backup}) or restore ({@link EmbeddedDatabase#restore}).
 *
 * @param directory the backup directory, or the restored data directory
 * @param version the backup's version: it holds every commit at or below it and none above it; every
 *     commit acknowledged before the backup started is at or below it
 * @param bytes the size of its files
 * @param files how many files it has
 * @param duration how long it took
 */
public record BackupInfo(Path directory, long version, long bytes, int files, Duration duration) {}
