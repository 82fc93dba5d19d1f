package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import static io.github.fdbcoord.mutex.MutexSchema.checkName;

/** The reads of the mutexes' event log that {@link MutexService} offers (events, positions, the latest event). */
final class EventLogReader {
  private final Database db;
  private final MutexSchema schema;
  private final Executor executor;
  private final long retentionVersions;

  EventLogReader(Database db, MutexSchema schema, Executor executor, long retentionVersions) {
    this.db = db;
    this.schema = schema;
    this.executor = executor;
    this.retentionVersions = retentionVersions;
  }

  CompletableFuture<List<LockEvent>> events(String name, FencingToken from, int limit) {
    checkName(name, "mutex name");
    if (from == null) {
      throw new IllegalArgumentException("from must not be null");
    }
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
    }
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readEventsFrom(tr, name, from, limit), executor));
  }

  CompletableFuture<FencingToken> currentPosition() {
    return FdbErrors.unwrapped(db.readAsync(tr -> tr.getReadVersion().thenApply(EventLogReader::positionAfter), executor));
  }

  /**
   * The position after every commit at or below {@code version}: the versionstamp with batch order
   * 0xFFFF, which no transaction's commit gets (a batch never holds that many), so no event is equal to it.
   */
  private static FencingToken positionAfter(long version) {
    return FencingToken.of(ByteBuffer.allocate(FencingToken.LENGTH).putLong(version).putShort((short) 0xFFFF)
        .array());
  }

  CompletableFuture<EventLogRead> eventsSince(String name, FencingToken position, int limit) {
    checkName(name, "mutex name");
    if (position == null) {
      throw new IllegalArgumentException("position must not be null");
    }
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
    }
    // The events and the read version in one transaction: every trim this read sees cut below its
    // own read version minus the retention, so a position at or above that lost nothing.
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readEventsFrom(tr, name, position, limit + 1)
        .thenCombine(tr.getReadVersion(), (events, readVersion) -> {
          List<LockEvent> newer = events.stream().filter(e -> e.sequence().isNewerThan(position))
              .limit(limit).toList();
          long since = position.commitVersion();
          return new EventLogRead(newer, since <= readVersion && since >= readVersion - retentionVersions);
        }), executor));
  }

  CompletableFuture<Optional<LockEvent>> latestEvent(String name) {
    checkName(name, "mutex name");
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readLatestEvent(tr, name), executor)).thenApply(Optional::ofNullable);
  }
}
