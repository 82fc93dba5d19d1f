package io.github.fdbcoord.cluster.singleton;

import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.election.Leadership;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexException;
import io.vertx.core.Context;
import io.vertx.core.Deployable;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A verticle deployed on exactly one node of a cluster at a time. Every node starts a singleton of the same name; the
 * node whose candidate leads the election of that name ({@link LeaderElection}) deploys the verticle, the others wait
 * in line (FIFO). When the leader's node dies, pauses past the lease or leaves, the next candidate leads and deploys
 * it; when it leaves cleanly ({@link #close()}), the verticle is undeployed before the leadership is handed on.
 *
 * <p><b>Never running twice.</b> The new leader's instance starts only once the old leadership lapsed in the store: the
 * old leader was silent for a lease. The old leader stops its instance before that: it undeploys once it has not
 * confirmed its leadership (a heartbeat committed) for the lease less {@code stopMargin}, measured on its own
 * monotonic clock from the start of the last heartbeat that committed ({@link Leadership#exclusiveUntilNanos()}).
 * So a leader cut off from the store, or whose heartbeats are too slow, stops on its own, in time, as long as its
 * undeploy takes less than {@code stopMargin} and its process runs. A process paused (GC, SIGSTOP) past the lease
 * cannot stop anything while paused: on resuming, its instance is undeployed at the first check (every 100 ms), but
 * it may act for that moment beside its successor. What it writes to FoundationDB is refused through the epoch (the
 * verticle's config carries it; {@link #leadership()} fences a transaction), which is why the epoch exists.
 *
 * <p>The verticle is deployed with {@code deployment}'s config plus {@code "singleton": {"name", "candidate",
 * "epoch"}} (the epoch as {@code FencingToken}'s hex). Runs on the context that called {@link #start}.
 */
public final class ClusterSingleton {
  private static final Logger log = LoggerFactory.getLogger(ClusterSingleton.class);
  /** Default time left before the lease at which a leader that could not confirm its leadership undeploys. */
  public static final Duration DEFAULT_STOP_MARGIN = Duration.ofSeconds(2);
  private static final long CHECK_MILLIS = 100;
  /** Before campaigning again after the store failed a campaign, or after the verticle failed to deploy. */
  private static final long RETRY_MILLIS = 1000;

  private final Vertx vertx;
  private final Context context;
  private final LeaderElection elections;
  private final String name;
  private final String candidate;
  private final Supplier<? extends Deployable> verticle;
  private final DeploymentOptions deployment;
  private final long marginNanos;

  // Changed on the context's thread only; the volatile ones are read from any.
  private volatile boolean closed;
  private volatile CompletableFuture<Leadership> campaign;
  private volatile Leadership leadership;
  private volatile String deploymentId;
  private long checkTimer = -1;
  private Future<Void> stepping = Future.succeededFuture();
  private volatile int deployments;

  private ClusterSingleton(Vertx vertx, LeaderElection elections, String name, String candidate,
      Supplier<? extends Deployable> verticle, DeploymentOptions deployment, Duration stopMargin) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.elections = elections;
    this.name = name;
    this.candidate = candidate;
    this.verticle = verticle;
    this.deployment = deployment;
    this.marginNanos = stopMargin.toNanos();
  }

  /**
   * Starts campaigning for {@code name} as {@code candidate} (unique per node, e.g. its node id) and deploys
   * {@code verticle} while leading. {@code deployment} may be null (defaults), {@code stopMargin} null
   * ({@link #DEFAULT_STOP_MARGIN}); the margin must be shorter than the election's lease.
   *
   * @throws IllegalArgumentException for a null or empty name or candidate, a null supplier, a negative margin
   */
  public static ClusterSingleton start(Vertx vertx, LeaderElection elections, String name, String candidate,
      Supplier<? extends Deployable> verticle, DeploymentOptions deployment, Duration stopMargin) {
    Objects.requireNonNull(vertx, "vertx");
    Objects.requireNonNull(elections, "elections");
    if (name == null || name.isEmpty() || candidate == null || candidate.isEmpty()) {
      throw new IllegalArgumentException("a singleton needs a name and a candidate, got " + name + " and " + candidate);
    }
    if (verticle == null) {
      throw new IllegalArgumentException("a singleton needs a verticle supplier, got null");
    }
    Duration margin = stopMargin == null ? DEFAULT_STOP_MARGIN : stopMargin;
    if (margin.isNegative()) {
      throw new IllegalArgumentException("stopMargin must not be negative, got " + margin);
    }
    ClusterSingleton s = new ClusterSingleton(vertx, elections, name, candidate, verticle,
        deployment == null ? new DeploymentOptions() : deployment, margin);
    s.context.runOnContext(v -> s.campaign());
    return s;
  }

  /**
   * The leadership this node holds while it leads (from just before its instance starts until just after it stops),
   * to fence transactions with its epoch.
   */
  public Optional<Leadership> leadership() {
    return Optional.ofNullable(leadership);
  }

  /** The deployment id of this node's instance while it runs. */
  public Optional<String> deploymentId() {
    return Optional.ofNullable(deploymentId);
  }

  /** How many times this node deployed the verticle so far. */
  public int deployments() {
    return deployments;
  }

  /**
   * Stops campaigning; on the leader, undeploys the instance, then resigns, so the next candidate's instance starts
   * only after this one stopped.
   */
  public Future<Void> close() {
    Promise<Void> done = Promise.promise();
    try {
      context.runOnContext(v -> {
        closed = true;
        cancelCampaign();
        stepDown(leadership, "the singleton was closed").onComplete(done);
      });
    } catch (RejectedExecutionException vertxClosed) {
      // Its Vert.x is closed, and the instance with it: only the leadership is left to hand on.
      closed = true;
      cancelCampaign();
      Leadership l = leadership;
      leadership = null;
      deploymentId = null;
      return l == null ? Future.succeededFuture()
          : Future.fromCompletionStage(l.resign().handle((r, e) -> (Void) null));
    }
    return done.future();
  }

  private void cancelCampaign() {
    CompletableFuture<Leadership> c = campaign;
    if (c != null) {
      c.cancel(false);
    }
  }

  private void campaign() {
    if (closed) {
      return;
    }
    CompletableFuture<Leadership> c = elections.campaign(name, candidate, null);
    campaign = c;
    c.whenComplete((won, err) -> context.runOnContext(v -> {
      if (err != null) {
        campaignFailed(FdbErrors.unwrap(err));
      } else if (closed) {
        won.resign();
      } else {
        leadership = won;
        won.lost().thenAccept(why -> context.runOnContext(x -> stepDown(won, "the leadership was lost: " + why.getMessage())));
        won.confirm().whenComplete((ok, e) -> context.runOnContext(x -> deployIfStillLeading(won, e)));
      }
    }));
  }

  private void campaignFailed(Throwable err) {
    if (closed || err instanceof CancellationException) {
      return;
    }
    if (err instanceof MutexException m && m.kind() == MutexException.Kind.CLOSED) {
      log.warn("singleton '" + name + "': the election service closed; no longer campaigning");
      return;
    }
    log.warn("singleton '" + name + "': campaigning failed, trying again in " + RETRY_MILLIS + " ms: " + err);
    vertx.setTimer(RETRY_MILLIS, t -> campaign());
  }

  private void deployIfStillLeading(Leadership won, Throwable confirmFailed) {
    if (won != leadership || closed) {
      return;
    }
    if (confirmFailed != null || !beforeStopTime(won)) {
      stepDown(won, "the leadership could not be confirmed: " + (confirmFailed == null ? "too late" : FdbErrors.unwrap(confirmFailed)));
      return;
    }
    JsonObject config = deployment.getConfig() == null ? new JsonObject() : deployment.getConfig().copy();
    config.put("singleton", new JsonObject().put("name", name).put("candidate", candidate)
        .put("epoch", won.epoch().toString()));
    vertx.deployVerticle(verticle, new DeploymentOptions(deployment).setConfig(config)).onComplete(ar ->
        context.runOnContext(v -> deployed(won, ar.result(), ar.cause())));
  }

  private void deployed(Leadership won, String id, Throwable failed) {
    if (failed != null) {
      log.warn("singleton '" + name + "': the verticle failed to deploy; resigning: " + failed);
      stepDown(won, "the verticle failed to deploy").onComplete(x -> { });
      return;
    }
    if (won != leadership || closed) {
      vertx.undeploy(id); // stepped down while deploying: the step-down found no instance to stop
      return;
    }
    deploymentId = id;
    deployments++;
    log.info("singleton '" + name + "' runs on " + candidate + " (epoch " + won.epoch() + ")");
    checkTimer = vertx.setPeriodic(CHECK_MILLIS, t -> {
      if (won == leadership && !beforeStopTime(won)) {
        stepDown(won, "the leadership was not confirmed within the lease less the stop margin");
      }
    });
  }

  /** Whether the instance may still run: before the last confirmed heartbeat's lease, less the margin. */
  private boolean beforeStopTime(Leadership won) {
    OptionalLong until = won.exclusiveUntilNanos();
    return until.isPresent() && until.getAsLong() - marginNanos - System.nanoTime() > 0;
  }

  /**
   * Stops this node's instance, then resigns (best effort: a leadership lost or unreachable simply lapses), then,
   * unless closed, campaigns again. Only for the current leadership: a later call for an older one does nothing.
   */
  private Future<Void> stepDown(Leadership from, String why) {
    if (from == null || from != leadership) {
      return stepping;
    }
    leadership = null;
    if (checkTimer >= 0) {
      vertx.cancelTimer(checkTimer);
      checkTimer = -1;
    }
    String id = deploymentId;
    deploymentId = null;
    if (id != null) {
      log.warn("singleton '" + name + "' stops on " + candidate + ": " + why);
    }
    Future<Void> undeployed = id == null ? Future.succeededFuture() : vertx.undeploy(id).recover(e -> {
      log.warn("singleton '" + name + "': undeploying failed: " + e);
      return Future.succeededFuture();
    });
    Promise<Void> done = Promise.promise();
    undeployed.onComplete(u -> from.resign().whenComplete((r, e) -> context.runOnContext(v -> {
      done.complete();
      if (!closed) {
        vertx.setTimer(id == null && !why.startsWith("the leadership was lost") ? RETRY_MILLIS : 1, t -> campaign());
      }
    })));
    stepping = done.future();
    return stepping;
  }
}
