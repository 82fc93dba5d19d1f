package io.github.fdbcoord.cluster;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How an {@link FdbClusterManager} reaches its store and how it keeps its membership.
 *
 * <p>The store is one of: a {@link Database} handed in ({@link #setDatabase}, not closed by the
 * manager; the way to share one embedded database between several nodes of one JVM), the embedded
 * engine in memory or on a data directory, or a real FoundationDB cluster named by a cluster file.
 * The last two are opened through {@code io.github.fdbcoord.store.Store} and closed when the node leaves.
 *
 * <p>Defaults: embedded in memory, cluster directory {@code ["fdbcoord", "cluster"]}, lock (mutex)
 * directory {@code ["fdbcoord", "mutex"]} (the coordination service's mutex root with its default
 * {@code rootDirectory}, so SharedData locks are ordinary mutexes of the service), node lease 10 s, heartbeat every 2 s, reaper every 1 s,
 * membership and registration logs kept 60 s, store operations time out after 30 s.
 *
 * <p>JSON form ({@link #FdbClusterManagerOptions(JsonObject)}, {@link #toJson()}):
 * <pre>
 * { "store": "embedded" | "cluster",  "dataDirectory": "data",  "clusterFile": "/etc/foundationdb/fdb.cluster",
 *   "directory": ["fdbcoord", "cluster"], "lockDirectory": ["fdbcoord", "mutex"],
 *   "nodeLeaseMillis": 10000, "heartbeatIntervalMillis": 2000, "reaperIntervalMillis": 1000,
 *   "logRetentionMillis": 60000, "operationTimeoutMillis": 30000 }
 * </pre>
 */
public class FdbClusterManagerOptions {
  /** Beside the coordination service's layers (its {@code rootDirectory} is {@code ["fdbcoord"]} by default). */
  public static final List<String> DEFAULT_DIRECTORY = List.of("fdbcoord", "cluster");
  /** The coordination service's mutex root ({@code rootDirectory + ["mutex"]} with its default root). */
  public static final List<String> DEFAULT_LOCK_DIRECTORY = List.of("fdbcoord", "mutex");

  private Database database;
  private StoreOptions storeOptions = StoreOptions.embeddedInMemory();
  private List<String> directory = DEFAULT_DIRECTORY;
  private List<String> lockDirectory = DEFAULT_LOCK_DIRECTORY;
  private Duration nodeLease = Duration.ofSeconds(10);
  private Duration heartbeatInterval = Duration.ofSeconds(2);
  private Duration reaperInterval = Duration.ofSeconds(1);
  private Duration logRetention = Duration.ofSeconds(60);
  private Duration operationTimeout = Duration.ofSeconds(30);

  public FdbClusterManagerOptions() {}

  public FdbClusterManagerOptions(FdbClusterManagerOptions other) {
    this.database = other.database;
    this.storeOptions = other.storeOptions;
    this.directory = other.directory;
    this.lockDirectory = other.lockDirectory;
    this.nodeLease = other.nodeLease;
    this.heartbeatInterval = other.heartbeatInterval;
    this.reaperInterval = other.reaperInterval;
    this.logRetention = other.logRetention;
    this.operationTimeout = other.operationTimeout;
  }

  /**
   * Reads the JSON form. Unknown keys are refused, so a misspelt option is an error rather than
   * a silent default.
   *
   * @throws IllegalArgumentException naming the offending key
   */
  public FdbClusterManagerOptions(JsonObject json) {
    for (String key : json.fieldNames()) {
      switch (key) {
        case "store": case "dataDirectory": case "clusterFile": case "directory": case "lockDirectory":
        case "nodeLeaseMillis": case "heartbeatIntervalMillis": case "reaperIntervalMillis": case "logRetentionMillis": case "operationTimeoutMillis":
          break;
        default:
          throw new IllegalArgumentException("unknown cluster manager option '" + key + "'");
      }
    }
    String store = string(json, "store", "embedded");
    switch (store) {
      case "embedded":
        String dir = string(json, "dataDirectory", null);
        storeOptions = dir == null ? StoreOptions.embeddedInMemory() : StoreOptions.embedded(Path.of(dir));
        break;
      case "cluster":
        String file = string(json, "clusterFile", null);
        storeOptions = StoreOptions.cluster(file == null ? null : Path.of(file));
        break;
      default:
        throw new IllegalArgumentException("store must be \"embedded\" or \"cluster\", got \"" + store + "\"");
    }
    if (json.containsKey("directory")) {
      setDirectory(path(json, "directory"));
    }
    if (json.containsKey("lockDirectory")) {
      setLockDirectory(path(json, "lockDirectory"));
    }
    if (json.containsKey("nodeLeaseMillis")) {
      setNodeLease(Duration.ofMillis(millis(json, "nodeLeaseMillis")));
    }
    if (json.containsKey("heartbeatIntervalMillis")) {
      setHeartbeatInterval(Duration.ofMillis(millis(json, "heartbeatIntervalMillis")));
    }
    if (json.containsKey("reaperIntervalMillis")) {
      setReaperInterval(Duration.ofMillis(millis(json, "reaperIntervalMillis")));
    }
    if (json.containsKey("logRetentionMillis")) {
      setLogRetention(Duration.ofMillis(millis(json, "logRetentionMillis")));
    }
    if (json.containsKey("operationTimeoutMillis")) {
      setOperationTimeout(Duration.ofMillis(millis(json, "operationTimeoutMillis")));
    }
  }

  /** The JSON form; a handed-in {@link Database} has none and is left out. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (storeOptions.engine() == StoreOptions.Engine.CLUSTER) {
      json.put("store", "cluster");
      if (storeOptions.clusterFile() != null) {
        json.put("clusterFile", storeOptions.clusterFile().toString());
      }
    } else {
      json.put("store", "embedded");
      if (storeOptions.dataDirectory() != null) {
        json.put("dataDirectory", storeOptions.dataDirectory().toString());
      }
    }
    return json.put("directory", new JsonArray(new ArrayList<>(directory)))
        .put("lockDirectory", new JsonArray(new ArrayList<>(lockDirectory)))
        .put("nodeLeaseMillis", nodeLease.toMillis())
        .put("heartbeatIntervalMillis", heartbeatInterval.toMillis())
        .put("reaperIntervalMillis", reaperInterval.toMillis())
        .put("logRetentionMillis", logRetention.toMillis())
        .put("operationTimeoutMillis", operationTimeout.toMillis());
  }

  /** Checks the options as a whole. @throws IllegalArgumentException saying what is inconsistent */
  public void validate() {
    if (heartbeatInterval.compareTo(nodeLease) >= 0) {
      throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval + ") must be shorter than nodeLease ("
          + nodeLease + "), or every node would be evicted");
    }
    if (logRetention.compareTo(nodeLease.multipliedBy(2)) < 0) {
      throw new IllegalArgumentException("logRetention (" + logRetention + ") must be at least twice nodeLease ("
          + nodeLease + "): a node must read the membership log before it is trimmed");
    }
  }

  public Database getDatabase() {
    return database;
  }

  /** A database to use as is (never closed by the manager); overrides the store options. */
  public FdbClusterManagerOptions setDatabase(Database database) {
    this.database = database;
    return this;
  }

  public StoreOptions getStoreOptions() {
    return storeOptions;
  }

  /** The store to open when no database is handed in (embedded in memory, on a data directory, or a cluster file). */
  public FdbClusterManagerOptions setStoreOptions(StoreOptions storeOptions) {
    this.storeOptions = Objects.requireNonNull(storeOptions, "storeOptions");
    return this;
  }

  public List<String> getDirectory() {
    return directory;
  }

  /** Directory of the cluster's own subspace (nodes, registrations, maps, counters). */
  public FdbClusterManagerOptions setDirectory(List<String> directory) {
    this.directory = checkPath(directory, "directory");
    return this;
  }

  public List<String> getLockDirectory() {
    return lockDirectory;
  }

  /** Directory of the mutexes behind SharedData locks: the mutex service's root, so they show in its event log. */
  public FdbClusterManagerOptions setLockDirectory(List<String> lockDirectory) {
    this.lockDirectory = checkPath(lockDirectory, "lockDirectory");
    return this;
  }

  public Duration getNodeLease() {
    return nodeLease;
  }

  /** How long a node's record may stay unchanged, on the evicting node's clock, before it is evicted (also the lease of its locks). */
  public FdbClusterManagerOptions setNodeLease(Duration nodeLease) {
    this.nodeLease = positive(nodeLease, "nodeLease");
    return this;
  }

  public Duration getHeartbeatInterval() {
    return heartbeatInterval;
  }

  public FdbClusterManagerOptions setHeartbeatInterval(Duration heartbeatInterval) {
    this.heartbeatInterval = positive(heartbeatInterval, "heartbeatInterval");
    return this;
  }

  public Duration getReaperInterval() {
    return reaperInterval;
  }

  /** How often each node checks the others' leases and sweeps expired async-map entries. */
  public FdbClusterManagerOptions setReaperInterval(Duration reaperInterval) {
    this.reaperInterval = positive(reaperInterval, "reaperInterval");
    return this;
  }

  public Duration getLogRetention() {
    return logRetention;
  }

  /** How long membership and registration log entries are kept for nodes to read. */
  public FdbClusterManagerOptions setLogRetention(Duration logRetention) {
    this.logRetention = positive(logRetention, "logRetention");
    return this;
  }

  public Duration getOperationTimeout() {
    return operationTimeout;
  }

  /**
   * Longest time one store operation (with its retries) may take before it fails with
   * FoundationDB's {@code transaction_timed_out} (1031): what callers see while the store is unavailable.
   */
  public FdbClusterManagerOptions setOperationTimeout(Duration operationTimeout) {
    this.operationTimeout = positive(operationTimeout, "operationTimeout");
    return this;
  }

  private static Duration positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
    return d;
  }

  private static List<String> checkPath(List<String> path, String name) {
    Objects.requireNonNull(path, name);
    if (path.isEmpty()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
    for (String p : path) {
      if (p == null || p.isEmpty()) {
        throw new IllegalArgumentException(name + " elements must be non-empty strings, got " + path);
      }
    }
    return List.copyOf(path);
  }

  private static String string(JsonObject json, String key, String def) {
    Object v = json.getValue(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof String)) {
      throw new IllegalArgumentException(key + " must be a string, got " + v);
    }
    return (String) v;
  }

  private static long millis(JsonObject json, String key) {
    Object v = json.getValue(key);
    if (!(v instanceof Number)) {
      throw new IllegalArgumentException(key + " must be a number of milliseconds, got " + v);
    }
    return ((Number) v).longValue();
  }

  private static List<String> path(JsonObject json, String key) {
    Object v = json.getValue(key);
    if (!(v instanceof JsonArray)) {
      throw new IllegalArgumentException(key + " must be an array of strings, got " + v);
    }
    List<String> out = new ArrayList<>();
    for (Object o : (JsonArray) v) {
      if (!(o instanceof String)) {
        throw new IllegalArgumentException(key + " must be an array of strings, got " + v);
      }
      out.add((String) o);
    }
    return out;
  }

  @Override
  public String toString() {
    return database != null ? "FdbClusterManagerOptions(database handed in, " + toJson().put("store", "handed-in") + ")"
        : "FdbClusterManagerOptions" + toJson().encode();
  }
}
