package io.github.fdbcoord.cluster.process;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.cluster.singleton.ClusterSingleton;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.election.Leadership;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A node of {@link SingletonCrossProcessTest} in a JVM of its own: a {@link ClusterSingleton} on a real FoundationDB
 * whose instance writes every 20 ms under its epoch, in transactions fenced by its leadership, and prints what it
 * does with {@link System#nanoTime()} (one monotonic clock for every process of the host):
 * {@code STARTED epoch nanos}, {@code WROTE epoch sequence commitVersion}, {@code REFUSED epoch sequence reason},
 * {@code STOPPED epoch nanos}. Arguments: candidate, cluster file, run id.
 */
public final class SingletonProcess {
  static final Duration LEASE = Duration.ofMillis(3000);
  static final Duration STOP_MARGIN = Duration.ofMillis(1000);
  private static final long WRITE_EVERY_MILLIS = 20;
  private static final AtomicReference<ClusterSingleton> SINGLETON = new AtomicReference<>();

  private SingletonProcess() {}

  public static void main(String[] args) throws Exception {
    String candidate = args[0];
    Store store = Store.open(StoreOptions.cluster(Path.of(args[1])));
    List<String> directory = List.of("fdb-coord-test", args[2]);
    Database db = store.database();
    LeaderElection elections = LeaderElection.open(db, MutexOptions.builder().directory(directory).lease(LEASE)
        .heartbeatInterval(Duration.ofMillis(500)).reaperInterval(Duration.ofMillis(100)).build()).join();
    Vertx vertx = Vertx.vertx();
    SINGLETON.set(ClusterSingleton.start(vertx, elections, "reports", candidate, () -> new Writer(db, directory),
        null, STOP_MARGIN));
    System.out.println("READY " + candidate);
    // Stays up until killed, paused or told to quit on standard input.
    while (System.in.read() >= 0) {
      // Any line: keep going; end of input: quit.
    }
    SINGLETON.get().close().toCompletionStage().toCompletableFuture().join();
    elections.close();
    vertx.close().toCompletionStage().toCompletableFuture().join();
    store.close();
    System.out.println("QUIT");
  }

  /** The singleton's work: fenced writes under its epoch, reported line by line. */
  private static final class Writer extends VerticleBase {
    private final Database db;
    private final List<String> directory;
    private String epoch;
    private long sequence;
    private long timer;

    Writer(Database db, List<String> directory) {
      this.db = db;
      this.directory = directory;
    }

    @Override
    public Future<?> start() {
      epoch = config().getJsonObject("singleton").getString("epoch");
      System.out.println("STARTED " + epoch + " " + System.nanoTime());
      timer = vertx.setPeriodic(WRITE_EVERY_MILLIS, t -> write());
      return Future.succeededFuture();
    }

    private void write() {
      Leadership leadership = SINGLETON.get().leadership().orElse(null);
      long n = ++sequence;
      if (leadership == null || !leadership.epoch().toString().equals(epoch)) {
        System.out.println("REFUSED " + epoch + " " + n + " no longer leading");
        return;
      }
      Transaction tr = db.createTransaction();
      byte[] key = Tuple.fromList(directory).add("writes").add(epoch).add(n).pack();
      leadership.fence(tr).thenCompose(v -> {
        tr.set(key, new byte[0]);
        return tr.commit();
      }).whenComplete((v, e) -> {
        if (e == null) {
          System.out.println("WROTE " + epoch + " " + n + " " + tr.getCommittedVersion());
        } else {
          System.out.println("REFUSED " + epoch + " " + n + " " + e);
        }
        tr.close();
      });
    }

    @Override
    public Future<?> stop() {
      vertx.cancelTimer(timer);
      System.out.println("STOPPED " + epoch + " " + System.nanoTime());
      return Future.succeededFuture();
    }
  }
}
