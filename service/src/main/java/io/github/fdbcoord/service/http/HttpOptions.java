package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.WireProtocol;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What the HTTP server ({@link HttpVerticle}) needs to know: where it listens, the bearer token, the
 * body limit, the event-bus prefix of the layers it forwards to, and the mutex settings its routes
 * and WebSockets honour. The service's configuration builds it ({@code CoordinationConfig.httpOptions()}),
 * which checks every value against the others; these setters check each value alone.
 *
 * <p>Mutable, as Vert.x's own options classes: {@code new HttpOptions().setPort(0).setToken("s3cret")}.
 * The defaults are the configuration's.
 */
public final class HttpOptions {
  /** The interface the server listens on unless told otherwise: loopback only. */
  public static final String DEFAULT_HOST = "127.0.0.1";
  /** The port the server listens on unless told otherwise. */
  public static final int DEFAULT_PORT = 8080;
  /** The largest request body (and WebSocket message) accepted unless told otherwise: 1 MiB. */
  public static final long DEFAULT_BODY_LIMIT = 1L << 20;
  /** The most mutexes one WebSocket may subscribe to unless told otherwise. */
  public static final int DEFAULT_MAX_WEB_SOCKET_SUBSCRIPTIONS = 100;
  /** The mutex lease reported on {@code /nodes} unless told otherwise. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);
  /** The longest acquire wait unless told otherwise. */
  public static final Duration DEFAULT_MAX_ACQUIRE_TIMEOUT = Duration.ofMinutes(5);
  /** How long a WebSocket's lock-event watch lasts unless renewed, unless told otherwise. */
  public static final Duration DEFAULT_WATCH_LEASE = Duration.ofSeconds(30);
  /** How long {@code /nodes} keeps listing a member that left or was evicted, unless told otherwise. */
  public static final Duration DEFAULT_DEPARTED_RETENTION = Duration.ofMinutes(5);
  /** The most members that left {@code /nodes} keeps listing at once, unless told otherwise. */
  public static final int DEFAULT_MAX_DEPARTED_NODES = 100;

  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private String token;
  private long bodyLimit = DEFAULT_BODY_LIMIT;
  private String addressPrefix = WireProtocol.DEFAULT_PREFIX;
  private Duration lease = DEFAULT_LEASE;
  private Duration maxAcquireTimeout = DEFAULT_MAX_ACQUIRE_TIMEOUT;
  private Duration watchLease = DEFAULT_WATCH_LEASE;
  private int maxWebSocketSubscriptions = DEFAULT_MAX_WEB_SOCKET_SUBSCRIPTIONS;
  private List<String> allowedHosts = List.of();
  private List<String> allowedOrigins = List.of();
  private String nodeName;
  private Duration departedRetention = DEFAULT_DEPARTED_RETENTION;
  private int maxDepartedNodes = DEFAULT_MAX_DEPARTED_NODES;

  /** Options with the defaults: loopback port 8080, no token, 1 MiB bodies, the default event-bus prefix. */
  public HttpOptions() {
  }

  /** The interface the server listens on ({@code http.host}). */
  public String getHost() {
    return host;
  }

  /** Sets the interface the server listens on; returns these options. */
  public HttpOptions setHost(String host) {
    this.host = Objects.requireNonNull(host, "host");
    return this;
  }

  /** The port the server listens on ({@code http.port}; 0: any free port, see {@link HttpVerticle#actualPort()}). */
  public int getPort() {
    return port;
  }

  /** Sets the port the server listens on (0 to 65535); returns these options. */
  public HttpOptions setPort(int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be between 0 and 65535, got " + port);
    }
    this.port = port;
    return this;
  }

  /** The bearer token every request must carry ({@code http.token}), or null when none is required. */
  public String getToken() {
    return token;
  }

  /** Sets the bearer token (null: none required; the admin routes then refuse every request); returns these options. */
  public HttpOptions setToken(String token) {
    if (token != null && token.isBlank()) {
      throw new IllegalArgumentException("token must not be empty or only white space: use null for none");
    }
    this.token = token;
    return this;
  }

  /** The largest request body and WebSocket message accepted, in bytes ({@code http.bodyLimit}). */
  public long getBodyLimit() {
    return bodyLimit;
  }

  /** Sets the largest request body accepted (at least 1 byte); returns these options. */
  public HttpOptions setBodyLimit(long bodyLimit) {
    if (bodyLimit < 1) {
      throw new IllegalArgumentException("bodyLimit must be at least 1, got " + bodyLimit);
    }
    this.bodyLimit = bodyLimit;
    return this;
  }

  /** The event-bus prefix of the layers the routes forward to ({@code addressPrefix}). */
  public String getAddressPrefix() {
    return addressPrefix;
  }

  /** Sets the event-bus prefix of the layers (not empty); returns these options. */
  public HttpOptions setAddressPrefix(String addressPrefix) {
    if (Objects.requireNonNull(addressPrefix, "addressPrefix").isEmpty()) {
      throw new IllegalArgumentException("addressPrefix must not be empty");
    }
    this.addressPrefix = addressPrefix;
    return this;
  }

  /** The mutex lease the layers grant ({@code mutex.leaseMs}), shown on {@code /nodes}. */
  public Duration getLease() {
    return lease;
  }

  /** Sets the mutex lease shown on {@code /nodes}; returns these options. */
  public HttpOptions setLease(Duration lease) {
    this.lease = positive(lease, "lease");
    return this;
  }

  /**
   * The longest an acquire may wait ({@code mutex.maxAcquireTimeoutMs}): an HTTP acquire without a
   * {@code timeoutMs} waits this long, and a longer one is refused.
   */
  public Duration getMaxAcquireTimeout() {
    return maxAcquireTimeout;
  }

  /** Sets the longest acquire wait (zero or more); returns these options. */
  public HttpOptions setMaxAcquireTimeout(Duration maxAcquireTimeout) {
    Objects.requireNonNull(maxAcquireTimeout, "maxAcquireTimeout");
    if (maxAcquireTimeout.isNegative()) {
      throw new IllegalArgumentException("maxAcquireTimeout must not be negative, got " + maxAcquireTimeout);
    }
    this.maxAcquireTimeout = maxAcquireTimeout;
    return this;
  }

  /**
   * How long a lock-event watch lasts unless renewed ({@code mutex.watchLeaseMs}): a WebSocket
   * renews its watches at a third of it.
   */
  public Duration getWatchLease() {
    return watchLease;
  }

  /** Sets how long a lock-event watch lasts unless renewed; returns these options. */
  public HttpOptions setWatchLease(Duration watchLease) {
    this.watchLease = positive(watchLease, "watchLease");
    return this;
  }

  /**
   * The most subscriptions one WebSocket may hold, mutexes, elections, semaphores and read-write locks together
   * ({@code http.maxWebSocketSubscriptions}).
   */
  public int getMaxWebSocketSubscriptions() {
    return maxWebSocketSubscriptions;
  }

  /** Sets the most mutexes one WebSocket may subscribe to (at least 1); returns these options. */
  public HttpOptions setMaxWebSocketSubscriptions(int maxWebSocketSubscriptions) {
    if (maxWebSocketSubscriptions < 1) {
      throw new IllegalArgumentException("maxWebSocketSubscriptions must be at least 1, got "
          + maxWebSocketSubscriptions);
    }
    this.maxWebSocketSubscriptions = maxWebSocketSubscriptions;
    return this;
  }

  /**
   * The {@code Host} names the server answers besides loopback ({@code localhost}, {@code 127.0.0.1},
   * {@code [::1]}) and {@link #getHost()}, any port ({@code http.allowedHosts}); {@code "*"} answers
   * every name. A request for another name is refused: a page whose name was rebound to this
   * machine's address (DNS rebinding) must not reach the service.
   */
  public List<String> getAllowedHosts() {
    return allowedHosts;
  }

  /** Sets the extra {@code Host} names the server answers (names without port, or {@code "*"}); returns these options. */
  public HttpOptions setAllowedHosts(List<String> allowedHosts) {
    this.allowedHosts = lowerCase(allowedHosts, "allowedHosts");
    return this;
  }

  /**
   * The origins of other sites' pages that may change state and open WebSockets
   * ({@code http.allowedOrigins}, such as {@code "https://ops.example.com"}); {@code "*"} allows
   * every origin. A page of the server's own origin is always allowed; requests without an
   * {@code Origin} (curl, programs) are not browser requests and pass.
   */
  public List<String> getAllowedOrigins() {
    return allowedOrigins;
  }

  /** Sets the origins allowed besides the server's own (scheme://host[:port], or {@code "*"}); returns these options. */
  public HttpOptions setAllowedOrigins(List<String> allowedOrigins) {
    List<String> origins = lowerCase(allowedOrigins, "allowedOrigins");
    for (String o : origins) {
      if (!o.equals("*") && !o.matches("[a-z][a-z0-9+.-]*://[^/?#\\s]+")) {
        throw new IllegalArgumentException("allowedOrigins holds '" + o
            + "', which is no origin: give scheme://host[:port] without a path, such as https://ops.example.com");
      }
    }
    this.allowedOrigins = origins;
    return this;
  }

  /**
   * The name {@code /nodes} and the dashboard show for this node ({@code nodeName}); null: the
   * {@code name} of the node's Vert.x cluster metadata if set, else {@code host:pid}.
   */
  public String getNodeName() {
    return nodeName;
  }

  /** Sets the name shown for this node (null: the default); returns these options. */
  public HttpOptions setNodeName(String nodeName) {
    if (nodeName != null && nodeName.isBlank()) {
      throw new IllegalArgumentException("nodeName must not be blank: leave it out (or null) to use the default");
    }
    this.nodeName = nodeName;
    return this;
  }

  /** How long {@code /nodes} keeps listing a member that left or was evicted ({@code http.departedRetentionMs}). */
  public Duration getDepartedRetention() {
    return departedRetention;
  }

  /** Sets how long a member that went stays listed; returns these options. */
  public HttpOptions setDepartedRetention(Duration departedRetention) {
    this.departedRetention = positive(departedRetention, "departedRetention");
    return this;
  }

  /** The most members that went {@code /nodes} lists at once, the latest ones ({@code http.maxDepartedNodes}). */
  public int getMaxDepartedNodes() {
    return maxDepartedNodes;
  }

  /** Sets the most members that went listed at once (0: none); returns these options. */
  public HttpOptions setMaxDepartedNodes(int maxDepartedNodes) {
    if (maxDepartedNodes < 0) {
      throw new IllegalArgumentException("maxDepartedNodes must not be negative, got " + maxDepartedNodes);
    }
    this.maxDepartedNodes = maxDepartedNodes;
    return this;
  }

  private static List<String> lowerCase(List<String> values, String name) {
    Objects.requireNonNull(values, name);
    for (String v : values) {
      if (v == null || v.isBlank()) {
        throw new IllegalArgumentException(name + " must hold non-empty strings, got " + values);
      }
    }
    return values.stream().map(v -> v.strip().toLowerCase(Locale.ROOT)).toList();
  }

  /** Where the lock events of mutex {@code name} are published. */
  String mutexEventsAddress(String name) {
    return WireProtocol.mutexEventsAddress(addressPrefix, name);
  }

  private static Duration positive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
    return d;
  }
}
