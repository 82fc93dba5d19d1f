package io.github.fdbcoord.cluster.impl;

import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The requests delivered to this node's consumers and not yet answered, and when the last one
 * arrived: what a closing node waits for once it has withdrawn its registrations, so that a planned
 * restart costs no sender a timeout. Fed by an inbound and an outbound interceptor on the node's
 * own event bus (a request is known by its reply address until the reply goes out). Internal.
 */
public final class RequestDrain {
  /** How long no request may arrive before the peers are taken to have seen the withdrawal. */
  static final Duration QUIET = Duration.ofMillis(500);
  private static final String REPLY_PREFIX = "__vertx.reply.";
  private static final long POLL_MILLIS = 10;
  /** A request unanswered for the default send timeout has been given up by its sender. */
  private static final long FORGET_NANOS = TimeUnit.MILLISECONDS.toNanos(DeliveryOptions.DEFAULT_TIMEOUT);

  private final Map<String, Long> unanswered = new ConcurrentHashMap<>();
  private volatile long lastRequestNanos = System.nanoTime();

  /** The outcome of a drain: how long it took and how many requests were still unanswered at its end. */
  public record Outcome(long tookMillis, int unanswered) {}

  /** Starts following the requests of {@code bus}. */
  public void attach(EventBus bus) {
    bus.addInboundInterceptor(this::inbound);
    bus.addOutboundInterceptor(this::outbound);
  }

  private <T> void inbound(DeliveryContext<T> ctx) {
    Message<T> m = ctx.message();
    String replyTo = m.replyAddress();
    if (replyTo != null && m.isSend() && !m.address().startsWith(REPLY_PREFIX)) {
      long now = System.nanoTime();
      lastRequestNanos = now;
      unanswered.put(replyTo, now);
    }
    ctx.next();
  }

  private <T> void outbound(DeliveryContext<T> ctx) {
    String address = ctx.message().address();
    if (address.startsWith(REPLY_PREFIX)) {
      unanswered.remove(address);
    }
    ctx.next();
  }

  /**
   * Completes once no request arrived for {@link #QUIET} since {@code withdrawnNanos} (when the
   * registrations left the store) and every request delivered was answered, or {@code timeout}
   * after {@code withdrawnNanos}, whichever comes first.
   */
  public CompletableFuture<Outcome> await(ScheduledExecutorService timer, long withdrawnNanos, Duration timeout) {
    CompletableFuture<Outcome> done = new CompletableFuture<>();
    long started = withdrawnNanos;
    Runnable[] check = new Runnable[1];
    check[0] = () -> {
      long now = System.nanoTime();
      unanswered.values().removeIf(at -> now - at > FORGET_NANOS);
      boolean quiet = now - Math.max(lastRequestNanos, withdrawnNanos) >= QUIET.toNanos();
      boolean timedOut = now - started >= timeout.toNanos();
      if ((quiet && unanswered.isEmpty()) || timedOut) {
        done.complete(new Outcome(TimeUnit.NANOSECONDS.toMillis(now - started), unanswered.size()));
        return;
      }
      try {
        timer.schedule(check[0], POLL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        done.complete(new Outcome(TimeUnit.NANOSECONDS.toMillis(now - started), unanswered.size()));
      }
    };
    check[0].run();
    return done;
  }
}
