package io.github.fdbcoord.service;

import io.github.fdbcoord.client.wire.WireProtocol;
import io.github.fdbcoord.semaphore.SemaphoreOptions;
import io.github.fdbcoord.rwlock.ReadWriteLockOptions;
import io.github.fdbcoord.lease.LeasedQueueOptions;
import io.github.fdbcoord.service.eventbus.LayerVerticle;
import io.github.fdbcoord.service.http.HttpOptions;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The service's configuration, read from a JSON object (conf/config.json or a deployment's config)
 * with documented defaults (docs/vertx.md). Every key is optional; a present key of the wrong type
 * or out of range, or a key this class does not know (a misspelling would otherwise silently fall
 * back to a default), fails with an {@link IllegalArgumentException} naming the key.
 *
 * <pre>
 * {
 *   "store": {"engine": "embedded", "dataDirectory": null, "clusterFile": null, "latencyMs": 0,
 *             "storageCacheBytes": 67108864, "minFreeSpaceBytes": 104857600, "verifyChecksumsAtOpen": false,
 *             "scrubIntervalMs": 0, "scrubBytesPerSecond": 16777216},
 *   "rootDirectory": ["fdbcoord"],
 *   "addressPrefix": "fdb",
 *   "workerPoolSize": 8,
 *   "requestTimeoutMs": 5000,
 *   "shutdownTimeoutMs": 7000,
 *   "nodeName": null,
 *   "http": {"enabled": false, "host": "127.0.0.1", "port": 8080, "token": null,
 *            "bodyLimit": 1048576, "maxWebSocketSubscriptions": 100, "allowedHosts": [], "allowedOrigins": [],
 *            "departedRetentionMs": 300000, "maxDepartedNodes": 100},
 *   "mutex": {"leaseMs": 10000, "heartbeatIntervalMs": 2000, "reaperIntervalMs": 1000,
 *             "maxAcquireTimeoutMs": 300000, "eventRetentionMs": 60000, "maxWatched": 1000},
 *   "semaphore": {"leaseMs": 10000, "heartbeatIntervalMs": 2000, "reaperIntervalMs": 1000, "maxQueueLength": 1000},
 *   "rwlock": {"leaseMs": 10000, "heartbeatIntervalMs": 2000, "reaperIntervalMs": 1000, "maxQueueLength": 1000},
 *   "interner": {"maxBatchSize": 1000, "cacheMaxBytes": 67108864},
 *   "directory": {"cacheSize": 10000, "maxPageSize": 1000}
 * }
 * </pre>
 */
public final class CoordinationConfig {
  private static final Set<String> LOOPBACK = Set.of("127.0.0.1", "localhost", "::1", "[::1]", "0:0:0:0:0:0:0:1");

  private final JsonObject json;
  private final StoreOptions store;
  private final List<String> rootDirectory;
  private final String addressPrefix;
  private final int workerPoolSize;
  private final Duration requestTimeout;
  private final Duration shutdownTimeout;
  /** Under Docker's default grace period between SIGTERM and SIGKILL (10 s), with room for the JVM's exit. */
  static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(7);
  private final boolean httpEnabled;
  private final String httpHost;
  private final int httpPort;
  private final String httpToken;
  private final long bodyLimit;
  private final int maxWebSocketSubscriptions;
  private final List<String> allowedHosts;
  private final List<String> allowedOrigins;
  private final String nodeName;
  private final Duration departedRetention;
  private final int maxDepartedNodes;
  private final Duration lease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final Duration maxAcquireTimeout;
  private final Duration eventRetention;
  private final int maxWatched;
  private final int maxQueueLength;
  private final Duration watchLease;
  private final String hostId;
  private final LeasedQueueSection semaphore;
  private final LeasedQueueSection readWriteLock;
  private final int maxBatchSize;
  private final long internerCacheMaxBytes;
  private final long directoryCacheSize;
  private final int maxPageSize;
  /** Every key (dotted path) read so far: whatever else the JSON holds is unknown. */
  private final Set<String> known = new LinkedHashSet<>();

  private CoordinationConfig(JsonObject json) {
    this.json = json.copy();
    this.store = storeOptions(object(json, "store"));
    this.rootDirectory = stringList(json, "rootDirectory", List.of("fdbcoord"));
    this.addressPrefix = string(json, "addressPrefix", WireProtocol.DEFAULT_PREFIX);
    if (addressPrefix.isEmpty()) {
      throw new IllegalArgumentException("addressPrefix must not be empty");
    }
    this.workerPoolSize = intValue(json, "workerPoolSize", 8, 1, 1024);
    this.requestTimeout = Duration.ofMillis(longValue(json, "requestTimeoutMs", "requestTimeoutMs",
        LayerVerticle.DEFAULT_REQUEST_TIMEOUT.toMillis(), 1, 3_600_000));
    this.shutdownTimeout = Duration.ofMillis(longValue(json, "shutdownTimeoutMs", "shutdownTimeoutMs",
        DEFAULT_SHUTDOWN_TIMEOUT.toMillis(), 1, 3_600_000));
    JsonObject http = object(json, "http");
    // Off unless asked for: an embedding application decides whether this node serves HTTP
    // (the stand-alone main's conf/config.json turns it on).
    this.httpEnabled = bool(http, "http.enabled", "enabled", false);
    this.httpHost = string(http, "http.host", "host", "127.0.0.1");
    this.httpPort = intValue(http, "http.port", "port", 8080, 0, 65535);
    this.httpToken = string(http, "http.token", "token", null);
    if (httpToken != null && httpToken.isBlank()) {
      throw new IllegalArgumentException("http.token must not be empty or only white space"
          + " (it would be guessed at once): leave it out (or null) to disable it");
    }
    this.bodyLimit = longValue(http, "http.bodyLimit", "bodyLimit", 1L << 20, 1, 1L << 30);
    this.maxWebSocketSubscriptions = intValue(http, "http.maxWebSocketSubscriptions", "maxWebSocketSubscriptions",
        100, 1, 100_000);
    this.allowedHosts = stringList(http, "http.allowedHosts", "allowedHosts", List.of(), true);
    this.allowedOrigins = stringList(http, "http.allowedOrigins", "allowedOrigins", List.of(), true);
    this.nodeName = string(json, "nodeName", null);
    if (nodeName != null && nodeName.isBlank()) {
      throw new IllegalArgumentException("nodeName must not be blank: leave it out (or null) to use the default");
    }
    this.departedRetention = Duration.ofMillis(longValue(http, "http.departedRetentionMs", "departedRetentionMs",
        HttpOptions.DEFAULT_DEPARTED_RETENTION.toMillis(), 1, 24L * 3600 * 1000));
    this.maxDepartedNodes = intValue(http, "http.maxDepartedNodes", "maxDepartedNodes",
        HttpOptions.DEFAULT_MAX_DEPARTED_NODES, 0, 10_000);
    try {
      new HttpOptions().setAllowedHosts(allowedHosts).setAllowedOrigins(allowedOrigins);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("http." + e.getMessage(), e);
    }
    if (httpEnabled && !isLoopback(httpHost) && httpToken == null) {
      throw new IllegalArgumentException("http.host is " + httpHost
          + ", which is reachable from other machines: set http.token (a bearer token every request must carry)"
          + " or bind to 127.0.0.1");
    }
    JsonObject mutex = object(json, "mutex");
    this.lease = Duration.ofMillis(longValue(mutex, "mutex.leaseMs", "leaseMs", 10_000, 1, Long.MAX_VALUE));
    this.heartbeatInterval = Duration.ofMillis(longValue(mutex, "mutex.heartbeatIntervalMs", "heartbeatIntervalMs",
        Math.min(2_000, Math.max(1, lease.toMillis() / 5)), 1, Long.MAX_VALUE));
    this.reaperInterval = Duration.ofMillis(longValue(mutex, "mutex.reaperIntervalMs", "reaperIntervalMs",
        Math.min(1_000, Math.max(1, lease.toMillis() / 10)), 1, Long.MAX_VALUE));
    if (heartbeatInterval.compareTo(lease) >= 0) {
      throw new IllegalArgumentException("mutex.heartbeatIntervalMs (" + heartbeatInterval.toMillis()
          + ") must be shorter than mutex.leaseMs (" + lease.toMillis() + ")");
    }
    this.maxAcquireTimeout = Duration.ofMillis(longValue(mutex, "mutex.maxAcquireTimeoutMs", "maxAcquireTimeoutMs",
        300_000, 0, 24L * 3600 * 1000));
    this.eventRetention = Duration.ofMillis(longValue(mutex, "mutex.eventRetentionMs", "eventRetentionMs",
        60_000, 1, Long.MAX_VALUE));
    this.maxWatched = intValue(mutex, "mutex.maxWatched", "maxWatched", 1000, 1, 9000);
    this.maxQueueLength = intValue(mutex, "mutex.maxQueueLength", "maxQueueLength", 1000, 1, 1_000_000);
    this.watchLease = Duration.ofMillis(longValue(mutex, "mutex.watchLeaseMs", "watchLeaseMs", 30_000, 300,
        24L * 3600 * 1000));
    String host = string(mutex, "mutex.hostId", "hostId", null);
    if (host != null && host.isEmpty()) {
      throw new IllegalArgumentException("mutex.hostId must not be empty: leave it out to use the default");
    }
    // A data directory is opened by one process at a time: it names this host across its restarts.
    this.hostId = host != null ? host : store.dataDirectory() != null
        ? "embedded:" + store.dataDirectory().toAbsolutePath().normalize() : null;
    // The layers' own defaults: the service changes nothing about a semaphore or a read-write lock unless
    // configured to; their acquires wait at most mutex.maxAcquireTimeoutMs.
    this.semaphore = leasedQueue(json, "semaphore");
    this.readWriteLock = leasedQueue(json, "rwlock");
    JsonObject interner = object(json, "interner");
    this.maxBatchSize = intValue(interner, "interner.maxBatchSize", "maxBatchSize", 1000, 1, 1_000_000);
    this.internerCacheMaxBytes = longValue(interner, "interner.cacheMaxBytes", "cacheMaxBytes", 64L << 20, 0,
        Long.MAX_VALUE);
    JsonObject directory = object(json, "directory");
    this.directoryCacheSize = longValue(directory, "directory.cacheSize", "cacheSize", 10_000, 0, Long.MAX_VALUE);
    this.maxPageSize = intValue(directory, "directory.maxPageSize", "maxPageSize", 1000, 1, 1_000_000);
    // The "cluster" section holds the cluster manager's options: CoordinationMain checks them with
    // FdbClusterManagerOptions, which refuses unknown keys itself.
    if (json.containsKey("cluster") && !(json.getValue("cluster") instanceof JsonObject)) {
      throw new IllegalArgumentException("cluster must be an object, got " + json.getValue("cluster"));
    }
    known.add("cluster");
    refuseUnknownKeys(json.copy().put("cluster", new JsonObject()), "");
  }

  private void refuseUnknownKeys(JsonObject json, String parent) {
    for (String key : json.fieldNames()) {
      String name = parent + key;
      if (!known.contains(name)) {
        String nearest = nearest(name, known);
        throw new IllegalArgumentException("unknown key '" + name + "'"
            + (nearest == null ? "" : " (did you mean '" + nearest + "'?)") + "; known keys: " + known);
      }
      Object v = json.getValue(key);
      if (v instanceof JsonObject) {
        refuseUnknownKeys((JsonObject) v, name + ".");
      }
    }
  }

  /** The known key closest to {@code name} in edit distance, or null when none is reasonably close. */
  static String nearest(String name, Set<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      String a = name.toLowerCase(Locale.ROOT);
      String b = c.toLowerCase(Locale.ROOT);
      // A shortened key ("store.dataDir") is as good as a typo.
      int d = b.startsWith(a) && a.contains(".") == b.contains(".") ? 1 : editDistance(a, b);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return bestDistance <= Math.max(2, name.length() / 3) ? best : null;
  }

  private static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitution, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  /** Reads {@code json} (null: all defaults). */
  public static CoordinationConfig from(JsonObject json) {
    return new CoordinationConfig(json == null ? new JsonObject() : json);
  }

  /** The JSON this configuration was read from. */
  public JsonObject json() {
    return json.copy();
  }

  /** The store to open: engine, data directory or cluster file and the engine's options ({@code store}). */
  public StoreOptions store() {
    return store;
  }

  /** Directory under which the allocator, interner and mutex layers keep their data. */
  public List<String> rootDirectory() {
    return rootDirectory;
  }

  /** The prefix of every event-bus address the service answers on ({@code addressPrefix}). */
  public String addressPrefix() {
    return addressPrefix;
  }

  /** Where each host answers which store it serves (see {@link StoreIdentity}). */
  public String storeAddress() {
    return addressPrefix + ".store";
  }

  /** The directory layer's event-bus address ({@code <prefix>.directory}). */
  public String directoryAddress() {
    return WireProtocol.directoryAddress(addressPrefix);
  }

  /** The allocator's event-bus address ({@code <prefix>.allocator}). */
  public String allocatorAddress() {
    return WireProtocol.allocatorAddress(addressPrefix);
  }

  /** The interner's event-bus address ({@code <prefix>.interner}). */
  public String internerAddress() {
    return WireProtocol.internerAddress(addressPrefix);
  }

  /** The mutex layer's event-bus address ({@code <prefix>.mutex}). */
  public String mutexAddress() {
    return WireProtocol.mutexAddress(addressPrefix);
  }

  /** Address of leader election ({@code <prefix>.election}). */
  public String electionAddress() {
    return WireProtocol.electionAddress(addressPrefix);
  }

  /** Address of the fenced semaphore ({@code <prefix>.semaphore}). */
  public String semaphoreAddress() {
    return WireProtocol.semaphoreAddress(addressPrefix);
  }

  /**
   * The semaphore layer's options from the {@code semaphore} section (lease, heartbeat and reaper intervals, queue
   * length), in {@code directory}; the service adds its executor.
   */
  public SemaphoreOptions.Builder semaphoreOptions(List<String> directory) {
    return semaphore.applyTo(SemaphoreOptions.builder().directory(directory));
  }

  /** Address of the read-write lock ({@code <prefix>.rwlock}). */
  public String readWriteLockAddress() {
    return WireProtocol.readWriteLockAddress(addressPrefix);
  }

  /** Address where the lock events of mutex {@code name} are published. */
  public String mutexEventsAddress(String name) {
    return mutexEventsAddress(addressPrefix, name);
  }

  static String mutexEventsAddress(String prefix, String name) {
    return WireProtocol.mutexEventsAddress(prefix, name);
  }

  /**
   * How long a request may wait for the store before it is answered 503 {@code store_unavailable}
   * ({@code requestTimeoutMs}); an acquire waits its own timeout plus at most 2 s of it.
   */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * How long the stand-alone service's stop (SIGTERM) may take before the process exits anyway
   * ({@code shutdownTimeoutMs}): releasing this node's grants and leaving the cluster wait for the
   * store, which may not answer; what they could not do ends with the leases.
   */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** How many threads run store calls ({@code workerPoolSize}). */
  public int workerPoolSize() {
    return workerPoolSize;
  }

  /** Whether this node serves HTTP ({@code http.enabled}; off unless asked for). */
  public boolean httpEnabled() {
    return httpEnabled;
  }

  /** The interface the HTTP server listens on ({@code http.host}). */
  public String httpHost() {
    return httpHost;
  }

  /** The port the HTTP server listens on ({@code http.port}; 0: any free port). */
  public int httpPort() {
    return httpPort;
  }

  /** The bearer token HTTP requests must carry, or null when none is required (loopback only). */
  public String httpToken() {
    return httpToken;
  }

  /**
   * The HTTP server's options ({@code HttpVerticle}): the {@code http}
   * section with the event-bus prefix and the mutex settings its routes honour. A new object each call.
   */
  public HttpOptions httpOptions() {
    return new HttpOptions().setHost(httpHost).setPort(httpPort).setToken(httpToken).setBodyLimit(bodyLimit)
        .setAddressPrefix(addressPrefix).setLease(lease).setMaxAcquireTimeout(maxAcquireTimeout)
        .setWatchLease(watchLease).setMaxWebSocketSubscriptions(maxWebSocketSubscriptions)
        .setAllowedHosts(allowedHosts).setAllowedOrigins(allowedOrigins).setNodeName(nodeName)
        .setDepartedRetention(departedRetention).setMaxDepartedNodes(maxDepartedNodes);
  }

  /** The largest HTTP request body and WebSocket message, in bytes ({@code http.bodyLimit}). */
  public long bodyLimit() {
    return bodyLimit;
  }

  /**
   * The most subscriptions one WebSocket may hold, mutexes, elections, semaphores and read-write locks together
   * ({@code http.maxWebSocketSubscriptions}).
   */
  public int maxWebSocketSubscriptions() {
    return maxWebSocketSubscriptions;
  }

  /** How long a mutex grant lasts without a heartbeat ({@code mutex.leaseMs}). */
  public Duration lease() {
    return lease;
  }

  /**
   * How often the mutex layer heartbeats what it keeps alive itself, such as the queue entry of a waiting acquire
   * ({@code mutex.heartbeatIntervalMs}).
   */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often the reaper scans for expired grants and waiters ({@code mutex.reaperIntervalMs}). */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** The longest an acquire may wait, and the wait of one without a timeout ({@code mutex.maxAcquireTimeoutMs}). */
  public Duration maxAcquireTimeout() {
    return maxAcquireTimeout;
  }

  /** How long lock events stay in a mutex's event log for replay ({@code mutex.eventRetentionMs}). */
  public Duration eventRetention() {
    return eventRetention;
  }

  /** Most mutexes whose events one node publishes (each costs a watch in the store). */
  public int maxWatched() {
    return maxWatched;
  }

  /** Most waiters in one mutex's queue (409 queue_full beyond). */
  public int maxQueueLength() {
    return maxQueueLength;
  }

  /**
   * The read-write lock layer's options from the {@code rwlock} section (lease, heartbeat and reaper intervals,
   * queue length); the caller adds where it lives and its threads.
   */
  public ReadWriteLockOptions.Builder readWriteLockOptions() {
    return readWriteLock.applyTo(ReadWriteLockOptions.builder());
  }

  private LeasedQueueSection leasedQueue(JsonObject json, String name) {
    JsonObject section = object(json, name);
    SemaphoreOptions layer = SemaphoreOptions.defaults(); // the defaults of every leased queue
    Duration lease = Duration.ofMillis(longValue(section, name + ".leaseMs", "leaseMs", layer.lease().toMillis(), 1,
        Long.MAX_VALUE));
    Duration heartbeat = Duration.ofMillis(longValue(section, name + ".heartbeatIntervalMs", "heartbeatIntervalMs",
        layer.heartbeatInterval().toMillis(), 1, Long.MAX_VALUE));
    Duration reaper = Duration.ofMillis(longValue(section, name + ".reaperIntervalMs", "reaperIntervalMs",
        layer.reaperInterval().toMillis(), 1, Long.MAX_VALUE));
    int queue = intValue(section, name + ".maxQueueLength", "maxQueueLength", layer.maxQueueLength(), 1, 1_000_000);
    if (heartbeat.compareTo(lease) >= 0) {
      throw new IllegalArgumentException(name + ".heartbeatIntervalMs (" + heartbeat.toMillis()
          + ") must be shorter than " + name + ".leaseMs (" + lease.toMillis() + ")");
    }
    return new LeasedQueueSection(lease, heartbeat, reaper, queue);
  }

  /** A {@code semaphore} or {@code rwlock} section: the options {@link LeasedQueueOptions} has, checked. */
  private record LeasedQueueSection(Duration lease, Duration heartbeatInterval, Duration reaperInterval,
      int maxQueueLength) {
    <O extends LeasedQueueOptions, B extends LeasedQueueOptions.Builder<O, B>> B applyTo(B builder) {
      return builder.lease(lease).heartbeatInterval(heartbeatInterval).reaperInterval(reaperInterval)
          .maxQueueLength(maxQueueLength);
    }
  }

  /** How long a lock-event watch lasts unless renewed (watchers renew it, see docs/vertx.md). */
  public Duration watchLease() {
    return watchLease;
  }

  /** This host's identity across restarts (null: none, so nothing is cleaned at start). */
  public String hostId() {
    return hostId;
  }

  /** The most strings or ids in one interner request, and the largest interner page ({@code interner.maxBatchSize}). */
  public int maxBatchSize() {
    return maxBatchSize;
  }

  /** The interner cache's size bound in bytes ({@code interner.cacheMaxBytes}). */
  public long internerCacheMaxBytes() {
    return internerCacheMaxBytes;
  }

  /** How many opened directories the directory layer caches ({@code directory.cacheSize}). */
  public long directoryCacheSize() {
    return directoryCacheSize;
  }

  /** The largest page a directory listing returns ({@code directory.maxPageSize}). */
  public int maxPageSize() {
    return maxPageSize;
  }

  static boolean isLoopback(String host) {
    if (LOOPBACK.contains(host)) {
      return true;
    }
    try {
      // Only literal addresses: a name is never resolved here (it could change later).
      if (host.matches("[0-9.]+") || host.contains(":")) {
        return InetAddress.getByName(host).isLoopbackAddress();
      }
    } catch (Exception e) {
      return false;
    }
    return false;
  }

  /**
   * The store section, read by the store module's one reader of it (the cluster manager's options use the same);
   * its keys are first checked here so that a misspelt one is answered with the nearest known key.
   */
  private StoreOptions storeOptions(JsonObject store) {
    for (String key : StoreOptions.KEYS) {
      known.add("store." + key);
    }
    refuseUnknownKeys(store, "store.");
    return StoreOptions.fromMap(store.getMap());
  }

  private JsonObject object(JsonObject json, String key) {
    known.add(key);
    Object v = json.getValue(key);
    if (v == null) {
      return new JsonObject();
    }
    if (!(v instanceof JsonObject)) {
      throw new IllegalArgumentException(key + " must be a JSON object, got " + v);
    }
    return (JsonObject) v;
  }

  private List<String> stringList(JsonObject json, String key, List<String> def) {
    return stringList(json, key, key, def, false);
  }

  private List<String> stringList(JsonObject json, String name, String key, List<String> def, boolean mayBeEmpty) {
    known.add(name);
    Object v = json.getValue(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof JsonArray) || (!mayBeEmpty && ((JsonArray) v).isEmpty())) {
      throw new IllegalArgumentException(name + " must be a" + (mayBeEmpty ? "n" : " non-empty") + " array of strings, got " + v);
    }
    List<String> out = new ArrayList<>();
    for (Object o : (JsonArray) v) {
      if (!(o instanceof String) || ((String) o).isEmpty()) {
        throw new IllegalArgumentException(name + " must hold non-empty strings only, got " + v);
      }
      out.add((String) o);
    }
    return List.copyOf(out);
  }

  private String string(JsonObject json, String key, String def) {
    return string(json, key, key, def);
  }

  private String string(JsonObject json, String name, String key, String def) {
    known.add(name);
    Object v = json.getValue(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof String)) {
      throw new IllegalArgumentException(name + " must be a string, got " + v);
    }
    return (String) v;
  }

  private boolean bool(JsonObject json, String name, String key, boolean def) {
    known.add(name);
    Object v = json.getValue(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof Boolean)) {
      throw new IllegalArgumentException(name + " must be true or false, got " + v);
    }
    return (Boolean) v;
  }

  private int intValue(JsonObject json, String key, int def, int min, int max) {
    return intValue(json, key, key, def, min, max);
  }

  private int intValue(JsonObject json, String name, String key, int def, int min, int max) {
    return (int) longValue(json, name, key, def, min, max);
  }

  private long longValue(JsonObject json, String name, String key, long def, long min, long max) {
    known.add(name);
    Object v = json.getValue(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof Integer || v instanceof Long)) {
      throw new IllegalArgumentException(name + " must be an integer, got " + v);
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }
}
