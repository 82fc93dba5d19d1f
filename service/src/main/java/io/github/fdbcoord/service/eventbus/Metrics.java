package io.github.fdbcoord.service.eventbus;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The service's own meters, in a Prometheus registry served at {@code GET /metrics}. When the
 * stand-alone main enables Vert.x's Micrometer metrics it binds them to the same registry, so the
 * one endpoint shows both.
 */
public final class Metrics {
  /**
   * Bounds of the request timers' histogram buckets ({@code _bucket{le=...}} series, so a p99 can
   * be computed across nodes): from 100 µs to the longest acquire wait; Micrometer spaces the
   * buckets between them.
   */
  private static final Duration MIN_EXPECTED = Duration.ofNanos(100_000);
  private static final Duration MAX_EXPECTED = Duration.ofMinutes(5);
  private final PrometheusMeterRegistry registry;
  /**
   * The request timers, kept once built (as Micrometer advises): building and registering a timer
   * on every request sorted its tags and looked it up in the registry each time. The label values
   * are bounded (route templates, actions, failure reasons), so these maps are too; the timers are
   * never removed from the registry, so a kept one stays the registered one.
   */
  private final ConcurrentHashMap<RequestKey, Timer> requestTimers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<HttpKey, Timer> httpTimers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, Timer> acquireWaitTimers = new ConcurrentHashMap<>();

  private record RequestKey(String address, String action, String outcome) {}

  private record HttpKey(String route, int status) {}

  /** Meters in a registry of their own. */
  public Metrics() {
    this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
  }

  /** Meters in {@code registry}, which this adds its filters to. */
  public Metrics(PrometheusMeterRegistry registry) {
    this.registry = registry;
    // vertx-micrometer-metrics registers these gauges once per event-bus address, but without the
    // address label (off: mutex event addresses would make it unbounded) every registration has the
    // same id: Micrometer keeps the first address's gauge, ignores the others (so the value is
    // wrong) and warns "Gauge already registered" at every start. Dropped rather than wrong.
    registry.config().meterFilter(MeterFilter.deny(id -> id.getTag("address") == null
        && (id.getName().equals("vertx.eventbus.handlers") || id.getName().equals("vertx.eventbus.pending"))));
    // Likewise the HTTP server's gauges (active connections, WebSocket connections, requests): each
    // instance of the HTTP verticle registers them, with the same ids, when its first connection
    // arrives; from the second connection served by another instance on, Micrometer ignores the new
    // gauge (the value counts one instance only) and warns. The request counters and timers add up
    // correctly and stay.
    registry.config().meterFilter(MeterFilter.deny(id -> id.getType() == Meter.Type.GAUGE
        && id.getName().startsWith("vertx.http.server.")));
  }

  /** The registry the meters are in (Vert.x's Micrometer metrics bind to it too). */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** One event-bus request served: its address, action, outcome ("ok" or a failure reason) and duration. */
  void request(String address, String action, String outcome, long nanos) {
    requestTimers.computeIfAbsent(new RequestKey(address, action, outcome), k -> Timer.builder("fdbcoord_requests")
        .description("Event-bus requests served by the coordination layers")
        .tag("address", k.address()).tag("action", k.action()).tag("outcome", k.outcome())
        .publishPercentileHistogram().minimumExpectedValue(MIN_EXPECTED).maximumExpectedValue(MAX_EXPECTED)
        .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** One HTTP request answered. */
  public void http(String route, int status, long nanos) {
    httpTimers.computeIfAbsent(new HttpKey(route, status), k -> Timer.builder("fdbcoord_http_requests")
        .description("HTTP requests answered by the coordination service")
        .tag("route", k.route()).tag("status", Integer.toString(k.status()))
        .publishPercentileHistogram().minimumExpectedValue(MIN_EXPECTED).maximumExpectedValue(MAX_EXPECTED)
        .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * One HTTP acquire's wait: from its request to the mutex layer until the layer's answer (the time
   * in the mutex's queue, with the transactions that enqueue and grant it), by the HTTP status it was
   * answered with. The same request's {@link #http} duration leaves this time out: a long wait is a
   * busy mutex, not a slow service.
   */
  public void acquireWait(int status, long nanos) {
    acquireWaitTimers.computeIfAbsent(status, k -> Timer.builder("fdbcoord_acquire_wait")
        .description("Time HTTP acquires waited for the mutex layer's answer (in the queue), left out of"
            + " fdbcoord_http_requests")
        .tag("status", Integer.toString(k))
        .publishPercentileHistogram().minimumExpectedValue(MIN_EXPECTED).maximumExpectedValue(MAX_EXPECTED)
        .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * The gauge {@code fdbcoord_store_commits_held}: 1 while the store holds commits back (the embedded
   * engine's disk is low on space), else 0. Returns it, for removal when the service stops.
   */
  public Gauge storeCommitsHeld(BooleanSupplier held) {
    return Gauge.builder("fdbcoord_store_commits_held", () -> held.getAsBoolean() ? 1 : 0)
        .description("1 while the store holds commits back because its disk is low on space")
        .strongReference(true)
        .register(registry);
  }

  /**
   * The gauge {@code fdbcoord_store_corruption_detected}: 1 once the embedded engine found a damaged file in
   * its storage (a read, a write, the scrub or the check at open), else 0. Returns it, for removal when the
   * service stops.
   */
  public Gauge storeCorruptionDetected(BooleanSupplier damaged) {
    return Gauge.builder("fdbcoord_store_corruption_detected", () -> damaged.getAsBoolean() ? 1 : 0)
        .description("1 once the embedded engine found a damaged file in its storage (see /health)")
        .strongReference(true)
        .register(registry);
  }

  /** One lock event published. */
  void lockEvent(String type) {
    registry.counter("fdbcoord_lock_events", "type", type).increment();
  }

  /** The Prometheus text exposition of every meter. */
  public String scrape() {
    return registry.scrape();
  }
}
