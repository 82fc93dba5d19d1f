package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.election.Leadership;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MultiMutexHandle;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.rwlock.LockMode;
import io.github.fdbcoord.rwlock.ReadWriteLockHandle;
import io.github.fdbcoord.rwlock.ReadWriteLockOptions;
import io.github.fdbcoord.rwlock.ReadWriteLockService;
import io.github.fdbcoord.semaphore.SemaphoreHandle;
import io.github.fdbcoord.semaphore.SemaphoreOptions;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;

/**
 * The coordination recipes of issue 37 against Apache Curator's on ZooKeeper, in one run, alternating round by round
 * (which goes first alternates too): each store's floor (every client writing a key or node of its own as fast as
 * it can: a commit here, a ZooKeeper write there), the mutex (each client a mutex of its own, then all one mutex; issue 36's
 * "mutex cycles/s with 16 clients", run with {@code -Dbench.clients=16}), a 3-permit semaphore, a read-write lock (one access in four a write), a
 * multi-lock of 5 of 20 locks, each cycled by {@code bench.clients} clients (threads that acquire and release as
 * fast as they can), and the election's hand-over: the leader resigns, the time until the next candidate leads.
 * The store is the FoundationDB cluster {@code -Dbench.clusterFile} names ({@code libfdb_c.so} on
 * {@code LD_LIBRARY_PATH}), else the embedded engine in memory; ZooKeeper
 * is curator-test's {@code TestingServer} (one server, in this JVM, data on a temporary directory, as ZooKeeper's own
 * tests run it). Prints cycles per second per round and the median ratio.
 * Properties: {@code bench.seconds} (per figure, default 5), {@code bench.rounds} (3), {@code bench.clients} (8),
 * {@code bench.handOvers} (50).
 */
public final class RecipesBenchmark {
  private static final int SECONDS = Integer.getInteger("bench.seconds", 5);
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
  private static final int CLIENTS = Integer.getInteger("bench.clients", 8);
  private static final int HAND_OVERS = Integer.getInteger("bench.handOvers", 50);
  private static final int PERMITS = 3;
  private static final int LOCKS = 20;
  private static final int LOCKS_PER_MULTI = 5;
  private static final Duration WAIT = Duration.ofSeconds(60);

  private RecipesBenchmark() {}

  /** One client's cycle: acquire and release once. */
  @FunctionalInterface
  private interface Cycle {
    void run(int client, Random random) throws Exception;
  }

  /** Cycles per second of {@code clients} threads running {@code cycle} for {@link #SECONDS}. */
  private static double cyclesPerSecond(Cycle cycle) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong cycles = new AtomicLong();
    List<Throwable> failures = new ArrayList<>();
    CountDownLatch done = new CountDownLatch(CLIENTS);
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      Thread t = new Thread(() -> {
        Random random = new Random(client);
        try {
          while (!stop.get()) {
            cycle.run(client, random);
            cycles.incrementAndGet();
          }
        } catch (Throwable e) {
          synchronized (failures) {
            failures.add(e);
          }
        } finally {
          done.countDown();
        }
      }, "bench-client-" + c);
      t.setDaemon(true);
      t.start();
    }
    long start = System.nanoTime();
    Thread.sleep(TimeUnit.SECONDS.toMillis(SECONDS));
    long counted = cycles.get();
    double seconds = (System.nanoTime() - start) / 1e9;
    stop.set(true);
    if (!done.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
      throw new IllegalStateException("clients still running " + WAIT + " after the end");
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException("a client failed", failures.get(0));
    }
    return counted / seconds;
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private static List<String> someLocks(Random random) {
    List<String> all = new ArrayList<>();
    for (int i = 0; i < LOCKS; i++) {
      all.add("lock-" + i);
    }
    java.util.Collections.shuffle(all, random);
    return all.subList(0, LOCKS_PER_MULTI);
  }

  /** The FoundationDB side: the layers on {@code db}, in directories of this run. */
  private static final class Fdb implements AutoCloseable {
    final SemaphoreService semaphores;
    final ReadWriteLockService rwlocks;
    final MutexService mutexes;
    final MutexService electionMutexes;
    final LeaderElection elections;

    final Database db;
    final String run;

    Fdb(Database db, String run) throws Exception {
      this.db = db;
      this.run = run;
      semaphores = await(SemaphoreService.open(db, SemaphoreOptions.builder().directory(List.of("bench", run, "sem")).build()));
      rwlocks = await(ReadWriteLockService.open(db, ReadWriteLockOptions.builder().directory(List.of("bench", run, "rw")).build()));
      mutexes = await(MutexService.open(db, MutexOptions.builder().directory(List.of("bench", run, "multi")).build()));
      // The election's own mutex service: the benchmark reads its queue to start a hand-over once the next waits.
      electionMutexes = await(MutexService.open(db, MutexOptions.builder().directory(List.of("bench", run, "election")).build()));
      elections = LeaderElection.over(electionMutexes);
    }

    double semaphore() throws Exception {
      return cyclesPerSecond((client, random) -> {
        SemaphoreHandle h = await(semaphores.acquire("sem", PERMITS, "c" + client, WAIT));
        await(h.release());
      });
    }

    double readWriteLock() throws Exception {
      return cyclesPerSecond((client, random) -> {
        LockMode mode = random.nextInt(4) == 0 ? LockMode.WRITE : LockMode.READ;
        ReadWriteLockHandle h = await(rwlocks.acquire("rw", "c" + client, mode, WAIT));
        await(h.release());
      });
    }

    /**
     * The store's floor for these recipes: each client commits a blind write of one key of its own, as fast as it
     * can (a read version and a commit). Every acquire and release here is at least one such commit.
     */
    double rawWrites() throws Exception {
      byte[] value = new byte[8];
      return cyclesPerSecond((client, random) -> await(db.runAsync(tr -> {
        tr.set(com.apple.foundationdb.tuple.Tuple.from("bench", run, "raw", client).pack(), value);
        return CompletableFuture.completedFuture(null);
      })));
    }

    /** Each client acquires and releases a mutex of its own ({@code shared} false) or all the same mutex. */
    double mutex(boolean shared) throws Exception {
      return cyclesPerSecond((client, random) -> {
        MutexHandle h = await(mutexes.acquire(shared ? "one" : "own-" + client, "c" + client, WAIT));
        await(h.release());
      });
    }

    double multiLock() throws Exception {
      return cyclesPerSecond((client, random) -> {
        MultiMutexHandle h = await(mutexes.acquireAll(someLocks(random), "c" + client, WAIT));
        await(h.release());
      });
    }

    /** Median ms from a resign's commit to the next candidate's leadership. */
    double handOverMillis() throws Exception {
      long[] nanos = new long[HAND_OVERS];
      Leadership leading = await(elections.campaign("leader", "a", WAIT));
      for (int i = 0; i < HAND_OVERS; i++) {
        String next = leading.leader().candidate().equals("a") ? "b" : "a";
        CompletableFuture<Leadership> waiting = elections.campaign("leader", next, WAIT);
        waitQueued();
        await(leading.resign());
        long resigned = System.nanoTime();
        leading = await(waiting);
        nanos[i] = System.nanoTime() - resigned;
      }
      await(leading.resign());
      return median(nanos) / 1e6;
    }

    private void waitQueued() throws Exception {
      while (await(electionMutexes.state("leader")).queue().isEmpty()) {
        Thread.sleep(1);
      }
    }

    @Override
    public void close() {
      semaphores.close();
      rwlocks.close();
      mutexes.close();
      elections.close();
      electionMutexes.close();
    }
  }

  /** The ZooKeeper side: Curator's recipes, one client per benchmark client (as one process each). */
  private static final class Curator implements AutoCloseable {
    final List<CuratorFramework> clients = new ArrayList<>();
    final String root;

    Curator(TestingServer zk, String run) throws Exception {
      root = "/bench/" + run;
      for (int i = 0; i < Math.max(CLIENTS, 2); i++) {
        CuratorFramework c = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryNTimes(3, 100));
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("no ZooKeeper connection");
        }
        clients.add(c);
      }
    }

    double semaphore() throws Exception {
      InterProcessSemaphoreV2[] sems = new InterProcessSemaphoreV2[CLIENTS];
      for (int i = 0; i < CLIENTS; i++) {
        sems[i] = new InterProcessSemaphoreV2(clients.get(i), root + "/sem", PERMITS);
      }
      return cyclesPerSecond((client, random) -> {
        Lease lease = sems[client].acquire(WAIT.toSeconds(), TimeUnit.SECONDS);
        sems[client].returnLease(lease);
      });
    }

    double readWriteLock() throws Exception {
      InterProcessReadWriteLock[] locks = new InterProcessReadWriteLock[CLIENTS];
      for (int i = 0; i < CLIENTS; i++) {
        locks[i] = new InterProcessReadWriteLock(clients.get(i), root + "/rw");
      }
      return cyclesPerSecond((client, random) -> {
        InterProcessLock l = random.nextInt(4) == 0 ? locks[client].writeLock() : locks[client].readLock();
        if (!l.acquire(WAIT.toSeconds(), TimeUnit.SECONDS)) {
          throw new IllegalStateException("no lock within " + WAIT);
        }
        l.release();
      });
    }

    /** ZooKeeper's floor: each client sets the data of a node of its own, as fast as it can (one write each). */
    double rawWrites() throws Exception {
      byte[] value = new byte[8];
      for (int i = 0; i < CLIENTS; i++) {
        if (clients.get(i).checkExists().forPath(root + "/raw/" + i) == null) { // made in an earlier round
          clients.get(i).create().creatingParentsIfNeeded().forPath(root + "/raw/" + i, value);
        }
      }
      return cyclesPerSecond((client, random) -> clients.get(client).setData().forPath(root + "/raw/" + client, value));
    }

    double mutex(boolean shared) throws Exception {
      InterProcessMutex[] locks = new InterProcessMutex[CLIENTS];
      for (int i = 0; i < CLIENTS; i++) {
        locks[i] = new InterProcessMutex(clients.get(i), root + "/mutex/" + (shared ? "one" : "own-" + i));
      }
      return cyclesPerSecond((client, random) -> {
        if (!locks[client].acquire(WAIT.toSeconds(), TimeUnit.SECONDS)) {
          throw new IllegalStateException("no lock within " + WAIT);
        }
        locks[client].release();
      });
    }

    double multiLock() throws Exception {
      return cyclesPerSecond((client, random) -> {
        List<InterProcessLock> locks = new ArrayList<>();
        // Curator's multi-lock takes its locks one by one in the order given: two clients naming shared locks in
        // different orders deadlock (until their timeout). Sorted, as a careful user orders them; acquireAll needs not.
        for (String name : someLocks(random).stream().sorted().toList()) {
          locks.add(new InterProcessMutex(clients.get(client), root + "/multi/" + name));
        }
        InterProcessMultiLock multi = new InterProcessMultiLock(locks);
        if (!multi.acquire(WAIT.toSeconds(), TimeUnit.SECONDS)) {
          throw new IllegalStateException("no locks within " + WAIT);
        }
        multi.release();
      });
    }

    /** Median ms from the leader's latch closed to the other latch leading. */
    double handOverMillis() throws Exception {
      long[] nanos = new long[HAND_OVERS];
      LeaderLatch leading = new LeaderLatch(clients.get(0), root + "/leader", "a");
      leading.start();
      leading.await();
      int leader = 0;
      for (int i = 0; i < HAND_OVERS; i++) {
        int next = 1 - leader;
        LeaderLatch waiting = new LeaderLatch(clients.get(next), root + "/leader", next == 0 ? "a" : "b");
        waiting.start();
        while (waiting.getParticipants().size() < 2) {
          Thread.sleep(1);
        }
        leading.close();
        long resigned = System.nanoTime();
        if (!waiting.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
          throw new IllegalStateException("no hand-over within " + WAIT);
        }
        nanos[i] = System.nanoTime() - resigned;
        leading = waiting;
        leader = next;
      }
      leading.close();
      return median(nanos) / 1e6;
    }

    @Override
    public void close() {
      clients.forEach(CuratorFramework::close);
    }
  }

  private static double median(long[] values) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static String rounded(List<Double> values, String format) {
    return values.stream().map(v -> String.format(Locale.ROOT, format, v)).collect(java.util.stream.Collectors.joining(", "));
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  public static void main(String[] args) throws Exception {
    String clusterFile = System.getProperty("bench.clusterFile");
    String label = clusterFile == null ? "embedded engine, in memory" : "FoundationDB 7.3 (" + clusterFile + ")";
    String run = UUID.randomUUID().toString().substring(0, 8);
    String[] figures = {"raw writes/s (a key or node each)", "mutex, one each, cycles/s", "mutex, one shared, cycles/s", "semaphore cycles/s",
        "read-write lock cycles/s", "multi-lock (5 of 20) cycles/s", "election hand-over p50 ms"};
    List<List<Double>> fdb = new ArrayList<>();
    List<List<Double>> zk = new ArrayList<>();
    for (int i = 0; i < figures.length; i++) {
      fdb.add(new ArrayList<>());
      zk.add(new ArrayList<>());
    }
    System.out.printf("RecipesBenchmark: %s against Curator %s on ZooKeeper (TestingServer), %d clients, %d s per figure, %d rounds%n",
        label, CuratorFramework.class.getPackage().getImplementationVersion(), CLIENTS, SECONDS, ROUNDS);
    AutoCloseable store = clusterFile == null ? EmbeddedDatabase.inMemory() : Store.open(StoreOptions.cluster(Path.of(clusterFile)));
    Database db = store instanceof Store s ? s.database() : (Database) store;
    try (store; TestingServer server = new TestingServer(true)) {
      Fdb f = new Fdb(db, run);
      try (f; Curator c = new Curator(server, run)) {
        for (int round = 1; round <= ROUNDS; round++) {
          boolean fdbFirst = round % 2 == 1;
          for (int side = 0; side < 2; side++) {
            boolean onFdb = (side == 0) == fdbFirst;
            List<List<Double>> out = onFdb ? fdb : zk;
            double[] r = onFdb
                ? new double[] {f.rawWrites(), f.mutex(false), f.mutex(true), f.semaphore(), f.readWriteLock(), f.multiLock(), f.handOverMillis()}
                : new double[] {c.rawWrites(), c.mutex(false), c.mutex(true), c.semaphore(), c.readWriteLock(), c.multiLock(), c.handOverMillis()};
            for (int i = 0; i < r.length; i++) {
              out.get(i).add(r[i]);
            }
            System.out.printf(Locale.ROOT, "round %d %-10s %s%n", round, onFdb ? "fdb" : "curator",
                String.format(Locale.ROOT, "%.0f / %.0f / %.0f / %.0f / %.0f / %.0f / %.2f", r[0], r[1], r[2], r[3], r[4], r[5], r[6]));
          }
        }
      }
    }
    System.out.println("figure | this project (each round) | Curator (each round) | ratio of medians");
    for (int i = 0; i < figures.length; i++) {
      String format = i == figures.length - 1 ? "%.2f" : "%.0f";
      System.out.printf(Locale.ROOT, "%s | %s | %s | %.2f%n", figures[i], rounded(fdb.get(i), format),
          rounded(zk.get(i), format), median(fdb.get(i)) / median(zk.get(i)));
    }
  }
}
