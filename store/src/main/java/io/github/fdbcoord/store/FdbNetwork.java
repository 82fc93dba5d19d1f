package io.github.fdbcoord.store;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The FoundationDB client network of this process, which every real-cluster {@link Store} shares,
 * and the order in which it stops when the JVM exits.
 *
 * <p>fdb-java registers a JVM shutdown hook of its own that stops the network. JVM shutdown hooks
 * run all at once, so that hook stopped the network while Vert.x's hook (the launcher's, the
 * service's) was still closing: a leaving node's transactions failed ("Broken promise"), it could
 * neither withdraw its registrations nor hand over its locks nor remove its record, and the
 * launcher waited two minutes for a close that could no longer finish while the peers waited for
 * the node's lease. So the first open disables that hook and the network stops only when the JVM
 * exits and no real-cluster store is open any more: at once from this class's hook if none is,
 * else on the thread that closes the last one (the leave of a cluster manager, the service's
 * shutdown after Vert.x closed). A store still open {@link #EXIT_GRACE} after the JVM began exiting
 * (one its user never closes) does not keep the network past that: the hook stops it then, and says
 * so on stderr. It must stop before the process exits: fdb_c's static destructors run at exit, and a
 * network thread still running then called a destroyed function (SIGSEGV in libfdb_c, seen once in
 * 19 test JVMs that left a store open), which is also why fdb_c asks a client to stop its network.
 *
 * <p>The network exists once per process (fdb-java's {@link FDB} is a singleton and cannot be
 * restarted once stopped), which is why {@link Store} keeps the one instance in a static field.
 */
final class FdbNetwork {
  /** How long a closing store waits for the network to stop; a stop that hangs must not hang the exit. */
  private static final Duration STOP_WAIT = Duration.ofSeconds(5);
  /**
   * How long an exiting JVM waits for its open stores to close before stopping the network under
   * them: longer than a Vert.x node takes to leave (under 2 s measured) and than the service's
   * default shutdown timeout (7 s).
   */
  static final Duration EXIT_GRACE = Duration.ofSeconds(10);

  private FDB fdb;
  private Thread networkThread;
  private int openStores;
  private boolean exiting;
  private boolean stopped;

  /**
   * Opens a database on the cluster {@code clusterFile} (the default cluster file when null),
   * starting the network on the first call.
   *
   * @throws StoreUnavailableException when the JVM is exiting (the network has stopped or is
   *     about to, and cannot start again)
   */
  synchronized Database open(String clusterFile, Executor executor) {
    if (stopped || exiting) {
      throw exiting(null);
    }
    if (fdb == null) {
      FDB selected = FDB.selectAPIVersion(Store.API_VERSION);
      // Before the network starts: once started, fdb-java would already have registered its hook.
      selected.disableShutdownHook();
      try {
        Runtime.getRuntime().addShutdownHook(new Thread(this::jvmExiting, "fdbcoord-fdb-network-exit"));
      } catch (IllegalStateException e) {
        throw exiting(e);
      }
      // A network another library of this JVM started already is used as it is (its thread unknown).
      selected.startNetwork(this::startNetworkThread);
      fdb = selected;
    }
    Database db = executor == null ? fdb.open(clusterFile) : fdb.open(clusterFile, executor);
    openStores++;
    return db;
  }

  private static StoreUnavailableException exiting(Throwable cause) {
    return new StoreUnavailableException("the JVM is exiting: no FoundationDB cluster can be opened any more", cause);
  }

  private synchronized void startNetworkThread(Runnable network) {
    Thread thread = new Thread(network, "fdb-network-thread");
    thread.setDaemon(true);
    networkThread = thread;
    thread.start();
  }

  /** A store opened by {@link #open} closed (once). */
  void closed() {
    Thread stopping;
    synchronized (this) {
      openStores--;
      stopping = exiting && openStores == 0 ? stop() : null;
      notifyAll();
    }
    awaitStop(stopping);
  }

  private void jvmExiting() {
    Thread stopping;
    synchronized (this) {
      exiting = true;
      long deadline = System.nanoTime() + EXIT_GRACE.toNanos();
      boolean interrupted = false;
      for (long left = EXIT_GRACE.toNanos(); openStores > 0 && !stopped && left > 0;
          left = deadline - System.nanoTime()) {
        try {
          TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          interrupted = true;
          break;
        }
      }
      if (openStores > 0 && !stopped) {
        // On stderr, not the log: the JVM's logging may be shut down by its own hook by now.
        System.err.println(openStores + " FoundationDB store(s) still open " + EXIT_GRACE.toSeconds()
            + " s after the JVM began exiting; stopping the FoundationDB network under them (close a store"
            + " when done with it)" + (interrupted ? "; the wait was interrupted" : ""));
      }
      stopping = stop();
    }
    awaitStop(stopping);
  }

  /**
   * Starts stopping the network on a thread of its own: {@code stopNetwork()} waits for the
   * network thread to return, so it must not run there (a store closed in a callback that ran on
   * the network thread), and a stop that hangs is left behind after {@link #STOP_WAIT}.
   */
  private Thread stop() {
    if (stopped || fdb == null) {
      return null;
    }
    stopped = true;
    FDB stopping = fdb;
    Thread thread = new Thread(() -> {
      try {
        stopping.stopNetwork();
      } catch (RuntimeException e) {
        System.err.println("the FoundationDB network did not stop cleanly: " + e);
      }
    }, "fdbcoord-fdb-network-stop");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  private void awaitStop(Thread stopping) {
    if (stopping == null || Thread.currentThread() == networkThreadNow()) {
      return;
    }
    try {
      stopping.join(STOP_WAIT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized Thread networkThreadNow() {
    return networkThread;
  }
}
