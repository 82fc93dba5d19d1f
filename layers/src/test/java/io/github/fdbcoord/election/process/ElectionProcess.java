package io.github.fdbcoord.election.process;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.election.Leadership;
import io.github.fdbcoord.fdb.Versionstamps;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A candidate of {@link ElectionCrossProcessTest} in a JVM of its own: campaigns in one election of a plain
 * {@link LeaderElection} (no Vert.x) on a real FoundationDB and, while it leads, writes a record every 20 ms in a
 * transaction fenced by its leadership, under a versionstamped key (so the store orders the records by commit) with
 * its name and epoch as value. Prints what it does, with {@link System#nanoTime()} (one monotonic clock for every
 * process of the host): {@code LEADING epoch nanos}, {@code WROTE epoch n}, {@code REFUSED epoch n reason},
 * {@code LOST epoch nanos reason}, then {@code PROBE epoch refused reason} (or {@code PROBE epoch wrote}) for a fenced
 * write tried after the loss, {@code HANDED candidate epoch} or {@code HANDOVER-REFUSED candidate reason}. After a
 * loss it campaigns again. Standard input: {@code HANDOVER candidate} hands its leadership over; {@code QUIT} (or the
 * end of input) closes the store and exits, without resigning.
 * Arguments: candidate, cluster file, run id.
 */
public final class ElectionProcess {
  static final Duration LEASE = Duration.ofMillis(3000);
  static final String ELECTION = "leader";
  private static final long WRITE_EVERY_MILLIS = 20;

  private final String candidate;
  private final Database db;
  private final LeaderElection elections;
  private final byte[] records;
  private final ScheduledExecutorService writer = Executors.newSingleThreadScheduledExecutor();
  /** The leadership this process writes under, or null: guarded by this. */
  private Leadership current;
  private long sequence;

  private ElectionProcess(String candidate, Database db, LeaderElection elections, byte[] records) {
    this.candidate = candidate;
    this.db = db;
    this.elections = elections;
    this.records = records;
  }

  /** The key prefix under which the candidates of run {@code run} write their records. */
  static Tuple records(String run) {
    return Tuple.from("fdb-coord-test", run, "records");
  }

  /** The directory of run {@code run}'s election. */
  static List<String> directory(String run) {
    return List.of("fdb-coord-test", run, "election");
  }

  public static void main(String[] args) throws Exception {
    String candidate = args[0];
    Store store = Store.open(StoreOptions.cluster(Path.of(args[1])));
    LeaderElection elections = LeaderElection.open(store.database(), MutexOptions.builder()
        .directory(directory(args[2])).lease(LEASE).heartbeatInterval(Duration.ofMillis(300))
        .reaperInterval(Duration.ofMillis(100)).build()).join();
    ElectionProcess process = new ElectionProcess(candidate, store.database(), elections, records(args[2]).pack());
    process.writer.scheduleAtFixedRate(process::write, WRITE_EVERY_MILLIS, WRITE_EVERY_MILLIS, TimeUnit.MILLISECONDS);
    process.campaign();
    System.out.println("READY " + candidate);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("QUIT"); line = in.readLine()) {
      if (line.startsWith("HANDOVER ")) {
        process.handOver(line.substring("HANDOVER ".length()));
      }
    }
    process.writer.shutdownNow();
    elections.close();
    store.close();
    System.out.println("QUIT");
  }

  private void campaign() {
    elections.campaign(ELECTION, candidate, null).whenComplete((l, e) -> {
      if (e != null) {
        System.out.println("FAILED campaign " + e);
        return;
      }
      synchronized (this) {
        current = l;
      }
      System.out.println("LEADING " + l.epoch() + " " + System.nanoTime());
      l.lost().thenAccept(why -> lost(l, why));
    });
  }

  private void lost(Leadership l, Exception why) {
    long at = System.nanoTime();
    synchronized (this) {
      if (current == l) {
        current = null;
      }
    }
    System.out.println("LOST " + l.epoch() + " " + at + " " + why.getMessage());
    // The loss is known: a fenced write tried now must be refused, whatever this process believed.
    fencedWrite(l).whenComplete((v, e) -> {
      System.out.println("PROBE " + l.epoch() + (e == null ? " wrote" : " refused " + cause(e)));
      campaign();
    });
  }

  private void write() {
    Leadership l;
    long n;
    synchronized (this) {
      l = current;
      n = ++sequence;
    }
    if (l == null) {
      return;
    }
    fencedWrite(l).whenComplete((v, e) -> System.out.println(e == null
        ? "WROTE " + l.epoch() + " " + n : "REFUSED " + l.epoch() + " " + n + " " + cause(e)));
  }

  /** One attempt, no retry loop: a write refused or failed is reported as such. */
  private CompletableFuture<Void> fencedWrite(Leadership l) {
    Transaction tr = db.createTransaction();
    return l.fence(tr).thenCompose(v -> {
      tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, Versionstamps.packKey(records, Tuple.from(Versionstamp.incomplete(0))),
          Tuple.from(candidate, l.epoch().bytes()).pack());
      return tr.commit();
    }).whenComplete((v, e) -> tr.close());
  }

  private void handOver(String successor) {
    Leadership l;
    synchronized (this) {
      l = current;
    }
    if (l == null) {
      System.out.println("HANDOVER-REFUSED " + successor + " not leading");
      return;
    }
    l.handOver(successor).whenComplete((next, e) -> {
      if (e != null) {
        System.out.println("HANDOVER-REFUSED " + successor + " " + cause(e));
        return;
      }
      synchronized (this) {
        if (current == l) {
          current = null;
        }
      }
      System.out.println("HANDED " + next.candidate() + " " + next.epoch());
    });
  }

  private static String cause(Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return c.getClass().getSimpleName() + ": " + c.getMessage();
  }
}
