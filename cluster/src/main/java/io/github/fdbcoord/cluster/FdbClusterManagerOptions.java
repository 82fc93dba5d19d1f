package io.github.fdbcoord.cluster;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * How an {@link FdbClusterManager} reaches its store and how it keeps its membership. Immutable;
 * build with {@link #builder()} or read the JSON form with {@link #FdbClusterManagerOptions(JsonObject)}.
 *
 * <p>The store is one of: a {@link Database} handed in ({@link Builder#database}, not closed by the
 * manager; the way to share one embedded database between several nodes of one JVM), the embedded
 * engine in memory or on a data directory, or a real FoundationDB cluster named by a cluster file.
 * The last two are opened through {@code io.github.fdbcoord.store.Store} and closed when the node leaves.
 * Only a FoundationDB cluster (or a database handed in to several nodes of one JVM) lets other nodes join.
 *
 * <p>Defaults: embedded in memory, cluster directory {@code ["fdbcoord", "cluster"]}, lock (mutex)
 * directory {@code ["fdbcoord", "mutex"]} (the coordination service's mutex root with its default
 * {@code rootDirectory}, so SharedData locks are ordinary mutexes of the service), node lease 10 s,
 * heartbeat every 2 s, reaper every 1 s, membership and registration logs kept 60 s, store
 * operations time out after 30 s, failure detection on with a 500 ms suspicion window. Leases,
 * heartbeats and reaper intervals below what a store round trip can honour are refused
 * ({@link #MIN_NODE_LEASE}, {@link #MIN_HEARTBEAT_INTERVAL}, {@link #MIN_REAPER_INTERVAL}, and
 * {@code nodeLease >= 2 * heartbeatInterval + reaperInterval}).
 * The event bus listens on {@value #DEFAULT_EVENT_BUS_HOST} by default.
 *
 * <p>The event bus host is where the clustered event bus listens (and what other nodes are told to
 * connect to) unless Vert.x's own {@code EventBusOptions.setHost} says otherwise. It defaults to
 * loopback because the event bus has no authentication: whoever reaches its port can send to every
 * address of the cluster, including the coordination service's. Nodes on several machines need a
 * host they can reach one another on, on a network only they share.
 *
 * <p>JSON form ({@link #FdbClusterManagerOptions(JsonObject)}, {@link #toJson()}); the {@code store} section is
 * the coordination service's (read and written by {@link StoreOptions#fromMap}/{@link StoreOptions#toMap}), and
 * durations are in milliseconds with the suffix {@code Ms}, as in the service's configuration:
 * <pre>
 * { "store": {"engine": "embedded" | "cluster", "dataDirectory": "data", "clusterFile": "/etc/foundationdb/fdb.cluster", ...},
 *   "directory": ["fdbcoord", "cluster"], "lockDirectory": ["fdbcoord", "mutex"],
 *   "nodeLeaseMs": 10000, "heartbeatIntervalMs": 2000, "reaperIntervalMs": 1000,
 *   "logRetentionMs": 60000, "operationTimeoutMs": 30000,
 *   "failureDetection": true, "suspicionWindowMs": 500, "drainTimeoutMs": 5000,
 *   "eventBusHost": "127.0.0.1" }
 * </pre>
 * The earlier form ({@code "store": "embedded"} with {@code dataDirectory} and {@code clusterFile} beside it, and
 * durations ending in {@code Millis}) is still read, for this release only, with a warning naming the new key.
 */
public final class FdbClusterManagerOptions {
  /** Beside the coordination service's layers (its {@code rootDirectory} is {@code ["fdbcoord"]} by default). */
  public static final List<String> DEFAULT_DIRECTORY = List.of("fdbcoord", "cluster");
  /** The coordination service's mutex root ({@code rootDirectory + ["mutex"]} with its default root). */
  public static final List<String> DEFAULT_LOCK_DIRECTORY = List.of("fdbcoord", "mutex");

  /** Where the clustered event bus listens by default: this machine only (see the class comment). */
  public static final String DEFAULT_EVENT_BUS_HOST = "127.0.0.1";

  private static final Logger log = LoggerFactory.getLogger(FdbClusterManagerOptions.class);

  private static final Set<String> KEYS = Set.of("store", "directory", "lockDirectory", "nodeLeaseMs",
      "heartbeatIntervalMs", "reaperIntervalMs", "logRetentionMs", "operationTimeoutMs", "failureDetection",
      "suspicionWindowMs", "drainTimeoutMs", "eventBusHost");

  /** Keys of the earlier form, read for one more release: each old key and the key that replaced it. */
  private static final Map<String, String> RENAMED = renamed();

  private static Map<String, String> renamed() {
    Map<String, String> renamed = new LinkedHashMap<>();
    for (String duration : List.of("nodeLease", "heartbeatInterval", "reaperInterval", "logRetention",
        "operationTimeout", "suspicionWindow", "drainTimeout")) {
      renamed.put(duration + "Millis", duration + "Ms");
    }
    renamed.put("dataDirectory", "store.dataDirectory");
    renamed.put("clusterFile", "store.clusterFile");
    return Map.copyOf(renamed);
  }

  /**
   * The shortest heartbeat interval accepted: a heartbeat is a store round trip (a few milliseconds,
   * more on a loaded machine), and one must complete before the next is due.
   */
  public static final Duration MIN_HEARTBEAT_INTERVAL = Duration.ofMillis(10);
  /** The shortest reaper interval accepted (a reaper pass is a store round trip too). */
  public static final Duration MIN_REAPER_INTERVAL = Duration.ofMillis(10);
  /**
   * The shortest node lease accepted. Shorter leases evict idle, healthy nodes whenever a heartbeat
   * is late by a scheduling hiccup (a 2 ms lease gave 454 false evictions in 15 s on three idle nodes).
   */
  public static final Duration MIN_NODE_LEASE = Duration.ofMillis(100);
  /** The shortest suspicion window accepted: a live suspect must see the suspicion and renew within it. */
  public static final Duration MIN_SUSPICION_WINDOW = Duration.ofMillis(50);

  private final Database database;
  private final StoreOptions storeOptions;
  private final List<String> directory;
  private final List<String> lockDirectory;
  private final Duration nodeLease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final Duration logRetention;
  private final Duration operationTimeout;
  private final boolean failureDetection;
  private final Duration suspicionWindow;
  private final Duration drainTimeout;
  private final String eventBusHost;

  private FdbClusterManagerOptions(Builder b) {
    this.eventBusHost = b.eventBusHost;
    this.database = b.database;
    this.storeOptions = b.storeOptions;
    this.directory = b.directory;
    this.lockDirectory = b.lockDirectory;
    this.nodeLease = b.nodeLease;
    this.heartbeatInterval = b.heartbeatInterval;
    this.reaperInterval = b.reaperInterval;
    this.logRetention = b.logRetention;
    this.operationTimeout = b.operationTimeout;
    this.failureDetection = b.failureDetection;
    this.suspicionWindow = b.suspicionWindow;
    this.drainTimeout = b.drainTimeout;
  }

  /**
   * Reads the JSON form; absent keys keep their defaults. Unknown keys are refused, so a misspelt
   * option is an error rather than a silent default.
   *
   * @throws IllegalArgumentException naming the offending key and what it must be
   */
  public FdbClusterManagerOptions(JsonObject json) {
    this(fromJson(json));
  }

  private static Builder fromJson(JsonObject given) {
    for (String key : given.fieldNames()) {
      if (!KEYS.contains(key) && !RENAMED.containsKey(key)) {
        throw new IllegalArgumentException("unknown cluster manager option '" + key + "' (known: " + new TreeSet<>(KEYS) + ")");
      }
    }
    JsonObject json = withCurrentKeys(given);
    Builder b = builder();
    Object store = json.getValue("store");
    if (store != null && !(store instanceof JsonObject)) {
      throw new IllegalArgumentException("store must be an object such as {\"engine\": \"embedded\"}, got " + store);
    }
    b.storeOptions(StoreOptions.fromMap(store == null ? null : ((JsonObject) store).getMap()));
    if (json.containsKey("directory")) {
      b.directory(path(json, "directory"));
    }
    if (json.containsKey("lockDirectory")) {
      b.lockDirectory(path(json, "lockDirectory"));
    }
    if (json.containsKey("nodeLeaseMs")) {
      b.nodeLease(millis(json, "nodeLeaseMs"));
    }
    if (json.containsKey("heartbeatIntervalMs")) {
      b.heartbeatInterval(millis(json, "heartbeatIntervalMs"));
    }
    if (json.containsKey("reaperIntervalMs")) {
      b.reaperInterval(millis(json, "reaperIntervalMs"));
    }
    if (json.containsKey("logRetentionMs")) {
      b.logRetention(millis(json, "logRetentionMs"));
    }
    if (json.containsKey("operationTimeoutMs")) {
      b.operationTimeout(millis(json, "operationTimeoutMs"));
    }
    if (json.containsKey("failureDetection")) {
      Object v = json.getValue("failureDetection");
      if (!(v instanceof Boolean on)) {
        throw new IllegalArgumentException("failureDetection must be true or false, got " + v);
      }
      b.failureDetection(on);
    }
    if (json.containsKey("suspicionWindowMs")) {
      b.suspicionWindow(millis(json, "suspicionWindowMs"));
    }
    if (json.containsKey("drainTimeoutMs")) {
      b.drainTimeout(millis(json, "drainTimeoutMs"));
    }
    if (json.containsKey("eventBusHost")) {
      b.eventBusHost(string(json, "eventBusHost", DEFAULT_EVENT_BUS_HOST));
    }
    b.validate();
    return b;
  }

  /**
   * {@code json} with each key of the earlier form moved to its current one, logging a warning that names the
   * current key; giving both is refused (which one was meant is unknown).
   */
  private static JsonObject withCurrentKeys(JsonObject given) {
    JsonObject json = given.copy();
    if (json.getValue("store") instanceof String engine) {
      log.warn("cluster manager option \"store\": \"" + engine + "\" is deprecated and will be removed in the next"
          + " release: use \"store\": {\"engine\": \"" + engine + "\"} (store.engine)");
      json.put("store", new JsonObject().put("engine", engine));
    }
    for (Map.Entry<String, String> renamed : RENAMED.entrySet()) {
      String old = renamed.getKey();
      if (!json.containsKey(old)) {
        continue;
      }
      String current = renamed.getValue();
      Object value = json.remove(old);
      log.warn("cluster manager option '" + old + "' is deprecated and will be removed in the next release: use '"
          + current + "'");
      JsonObject section = json;
      String key = current;
      if (current.startsWith("store.")) {
        if (json.getValue("store") == null) {
          json.put("store", new JsonObject());
        }
        if (!(json.getValue("store") instanceof JsonObject store)) {
          continue;
        }
        section = store;
        key = current.substring("store.".length());
      }
      if (section.containsKey(key)) {
        throw new IllegalArgumentException("cluster manager options '" + old + "' and '" + current
            + "' are the same option: give only '" + current + "'");
      }
      section.put(key, value);
    }
    return json;
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults: embedded in memory (a cluster of this JVM alone). */
  public static FdbClusterManagerOptions defaults() {
    return builder().build();
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.database = database;
    b.storeOptions = storeOptions;
    b.directory = directory;
    b.lockDirectory = lockDirectory;
    b.nodeLease = nodeLease;
    b.heartbeatInterval = heartbeatInterval;
    b.reaperInterval = reaperInterval;
    b.logRetention = logRetention;
    b.operationTimeout = operationTimeout;
    b.failureDetection = failureDetection;
    b.suspicionWindow = suspicionWindow;
    b.drainTimeout = drainTimeout;
    b.eventBusHost = eventBusHost;
    return b;
  }

  /** The JSON form; a handed-in {@link Database} has none and is left out. */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("store", new JsonObject(storeOptions.toMap()));
    return json.put("directory", new JsonArray(new ArrayList<>(directory)))
        .put("lockDirectory", new JsonArray(new ArrayList<>(lockDirectory)))
        .put("nodeLeaseMs", nodeLease.toMillis())
        .put("heartbeatIntervalMs", heartbeatInterval.toMillis())
        .put("reaperIntervalMs", reaperInterval.toMillis())
        .put("logRetentionMs", logRetention.toMillis())
        .put("operationTimeoutMs", operationTimeout.toMillis())
        .put("failureDetection", failureDetection)
        .put("suspicionWindowMs", suspicionWindow.toMillis())
        .put("drainTimeoutMs", drainTimeout.toMillis())
        .put("eventBusHost", eventBusHost);
  }

  /** The host the clustered event bus listens on unless {@code EventBusOptions} names one. */
  public String eventBusHost() {
    return eventBusHost;
  }

  /** A database to use as is (never closed by the manager), or null to open {@link #storeOptions()}. */
  public Database database() {
    return database;
  }

  /** The store to open when no database is handed in (embedded in memory, on a data directory, or a cluster file). */
  public StoreOptions storeOptions() {
    return storeOptions;
  }

  /** Directory of the cluster's own subspace (nodes, registrations, maps, counters). */
  public List<String> directory() {
    return directory;
  }

  /** Directory of the mutexes behind SharedData locks: the mutex service's root, so they show in its event log. */
  public List<String> lockDirectory() {
    return lockDirectory;
  }

  /** How long a node's record may stay unchanged, on the evicting node's clock, before it is evicted (also the lease of its locks). */
  public Duration nodeLease() {
    return nodeLease;
  }

  /** How often a node renews its record (and its locks). */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often each node checks the others' leases and sweeps expired async-map entries. */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** How long membership and registration log entries are kept for nodes to read. */
  public Duration logRetention() {
    return logRetention;
  }

  /**
   * Longest time one store operation (with its retries) may take before it fails with
   * FoundationDB's {@code transaction_timed_out} (1031): what callers see while the store is unavailable.
   */
  public Duration operationTimeout() {
    return operationTimeout;
  }

  /**
   * Whether the node watches its peers' connections to detect a crash quickly (a suspicion the
   * peer may refute within {@link #suspicionWindow()}, then an eviction); the lease stays the
   * fallback. Costs a TCP port per node and one idle connection per pair of nodes.
   */
  public boolean failureDetection() {
    return failureDetection;
  }

  /**
   * How long a suspected node has to refute the suspicion before it is evicted. Shorter detects a
   * crash sooner; it must stay above a store round trip plus the suspect's scheduling delay, or a
   * live but slow node whose connection was merely reset is evicted (it then re-joins).
   */
  public Duration suspicionWindow() {
    return suspicionWindow;
  }

  /**
   * The longest a node's Vert.x waits, when it closes, for the requests already on their way to
   * this node's consumers: the node first removes its registrations from the store (so senders
   * stop choosing it), then waits until no request has arrived for a quiet period and every
   * request delivered here was answered, but no longer than this. Only then does Vert.x undeploy
   * and close the event bus. Longer never costs a request; shorter bounds the time a close takes
   * when a consumer does not answer.
   */
  public Duration drainTimeout() {
    return drainTimeout;
  }

  /** The JSON form, for logs (a handed-in database shows as such). */
  @Override
  public String toString() {
    return database != null ? "FdbClusterManagerOptions(database handed in, " + toJson().put("store", "handed-in") + ")"
        : "FdbClusterManagerOptions" + toJson().encode();
  }

  /** Builds {@link FdbClusterManagerOptions}; each setter checks its value, {@link #build()} checks them together. */
  public static final class Builder {
    private Database database;
    private StoreOptions storeOptions = StoreOptions.embeddedInMemory();
    private List<String> directory = DEFAULT_DIRECTORY;
    private List<String> lockDirectory = DEFAULT_LOCK_DIRECTORY;
    private Duration nodeLease = Duration.ofSeconds(10);
    private Duration heartbeatInterval = Duration.ofSeconds(2);
    private Duration reaperInterval = Duration.ofSeconds(1);
    private Duration logRetention = Duration.ofSeconds(60);
    private Duration operationTimeout = Duration.ofSeconds(30);
    private boolean failureDetection = true;
    private Duration suspicionWindow = Duration.ofMillis(500);
    private Duration drainTimeout = Duration.ofSeconds(5);
    private String eventBusHost = DEFAULT_EVENT_BUS_HOST;

    private Builder() {}

    /** A database to use as is (never closed by the manager); overrides the store options. */
    public Builder database(Database database) {
      this.database = database;
      return this;
    }

    /** The store to open when no database is handed in. */
    public Builder storeOptions(StoreOptions storeOptions) {
      this.storeOptions = Objects.requireNonNull(storeOptions, "storeOptions");
      return this;
    }

    /** Directory of the cluster's own subspace; non-empty, of non-empty names. */
    public Builder directory(List<String> directory) {
      this.directory = checkPath(directory, "directory");
      return this;
    }

    /** Directory of the mutexes behind SharedData locks; non-empty, of non-empty names. */
    public Builder lockDirectory(List<String> lockDirectory) {
      this.lockDirectory = checkPath(lockDirectory, "lockDirectory");
      return this;
    }

    /** Node (and lock) lease; positive. */
    public Builder nodeLease(Duration nodeLease) {
      this.nodeLease = positive(nodeLease, "nodeLease");
      return this;
    }

    /** Heartbeat interval; positive, shorter than the node lease. */
    public Builder heartbeatInterval(Duration heartbeatInterval) {
      this.heartbeatInterval = positive(heartbeatInterval, "heartbeatInterval");
      return this;
    }

    /** Reaper interval; positive. */
    public Builder reaperInterval(Duration reaperInterval) {
      this.reaperInterval = positive(reaperInterval, "reaperInterval");
      return this;
    }

    /** Log retention; at least twice the node lease. */
    public Builder logRetention(Duration logRetention) {
      this.logRetention = positive(logRetention, "logRetention");
      return this;
    }

    /** Operation timeout; positive. */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = positive(operationTimeout, "operationTimeout");
      return this;
    }

    /** Whether to detect crashes from peer connections (default true). */
    public Builder failureDetection(boolean failureDetection) {
      this.failureDetection = failureDetection;
      return this;
    }

    /** Suspicion window (default 500 ms); at least {@link #MIN_SUSPICION_WINDOW}, shorter than the node lease. */
    public Builder suspicionWindow(Duration suspicionWindow) {
      this.suspicionWindow = positive(suspicionWindow, "suspicionWindow");
      return this;
    }

    /** Drain timeout on close (default 5 s); positive. */
    public Builder drainTimeout(Duration drainTimeout) {
      this.drainTimeout = positive(drainTimeout, "drainTimeout");
      return this;
    }

    /**
     * The host the clustered event bus listens on (an address or a name of this machine; "0.0.0.0"
     * for every interface); default {@value FdbClusterManagerOptions#DEFAULT_EVENT_BUS_HOST}.
     */
    public Builder eventBusHost(String eventBusHost) {
      Objects.requireNonNull(eventBusHost, "eventBusHost");
      if (eventBusHost.isBlank()) {
        throw new IllegalArgumentException("eventBusHost must not be blank");
      }
      this.eventBusHost = eventBusHost;
      return this;
    }

    /**
     * The options.
     *
     * @throws IllegalArgumentException when the heartbeat is not shorter than the lease or the logs
     *     are not kept for twice the lease
     */
    public FdbClusterManagerOptions build() {
      validate();
      return new FdbClusterManagerOptions(this);
    }

    private void validate() {
      atLeast(heartbeatInterval, MIN_HEARTBEAT_INTERVAL, "heartbeatInterval", "a heartbeat is a store round trip");
      atLeast(reaperInterval, MIN_REAPER_INTERVAL, "reaperInterval", "a reaper pass is a store round trip");
      atLeast(nodeLease, MIN_NODE_LEASE, "nodeLease", "shorter leases evict healthy nodes whenever a heartbeat is a little late");
      atLeast(suspicionWindow, MIN_SUSPICION_WINDOW, "suspicionWindow", "a live suspect must see the suspicion and renew within it");
      Duration needed = heartbeatInterval.multipliedBy(2).plus(reaperInterval);
      if (nodeLease.compareTo(needed) < 0) {
        throw new IllegalArgumentException("nodeLease (" + nodeLease.toMillis() + " ms) must be at least 2 x heartbeatInterval + reaperInterval ("
            + needed.toMillis() + " ms): the reaper sees a record up to one reaper interval late, and one late heartbeat must not evict a node");
      }
      if (suspicionWindow.compareTo(nodeLease) >= 0) {
        throw new IllegalArgumentException("suspicionWindow (" + suspicionWindow.toMillis() + " ms) must be shorter than nodeLease ("
            + nodeLease.toMillis() + " ms), or suspicion would be slower than the lease");
      }
      if (heartbeatInterval.compareTo(nodeLease) >= 0) {
        throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval + ") must be shorter than nodeLease ("
            + nodeLease + "), or every node would be evicted");
      }
      if (logRetention.compareTo(nodeLease.multipliedBy(2)) < 0) {
        throw new IllegalArgumentException("logRetention (" + logRetention + ") must be at least twice nodeLease ("
            + nodeLease + "): a node must read the membership log before it is trimmed");
      }
    }
  }

  private static Duration positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
    return d;
  }

  private static void atLeast(Duration d, Duration min, String name, String why) {
    if (d.compareTo(min) < 0) {
      throw new IllegalArgumentException(name + " (" + d.toMillis() + " ms) is below the minimum of " + min.toMillis() + " ms: " + why);
    }
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
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException(key + " must be a string, got " + v);
    }
    return s;
  }

  private static Duration millis(JsonObject json, String key) {
    Object v = json.getValue(key);
    if (!(v instanceof Number n) || n.longValue() <= 0 || n.doubleValue() != n.longValue()) {
      throw new IllegalArgumentException(key + " must be a positive whole number of milliseconds (> 0), got " + v);
    }
    return Duration.ofMillis(n.longValue());
  }

  private static List<String> path(JsonObject json, String key) {
    Object v = json.getValue(key);
    if (!(v instanceof JsonArray array)) {
      throw new IllegalArgumentException(key + " must be a non-empty array of strings, got " + v);
    }
    List<String> out = new ArrayList<>();
    for (Object o : array) {
      if (!(o instanceof String s)) {
        throw new IllegalArgumentException(key + " must be a non-empty array of strings, got " + v);
      }
      out.add(s);
    }
    return checkPath(out, key);
  }
}
