package io.github.fdbcoord.cluster.process;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.testing.ChildJvm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One cluster node in a JVM of its own, started as users start one: Vert.x's launcher with
 * {@code -cluster} and {@link NodeVerticle}, the manager found through its {@code VertxServiceProvider}
 * and configured by the options file the system property {@value FdbClusterManager#CONFIG_PROPERTY}
 * names. Talks to the node through {@link NodeVerticle}'s command lines.
 */
final class NodeProcess implements AutoCloseable {
  /** A node's start: a JVM, Vert.x, the manager's join on FoundationDB; slow on two busy cores. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final ChildJvm jvm;
  private final AtomicInteger commands = new AtomicInteger();
  private String nodeId;

  private NodeProcess(ChildJvm jvm) {
    this.jvm = jvm;
  }

  /**
   * Starts a node whose manager reads {@code options}. vertx-core's tests jar and Hazelcast also
   * register a cluster manager provider; they are left off the class path so that the launcher
   * finds this project's only.
   */
  static NodeProcess start(String name, Path options) {
    ChildJvm jvm = ChildJvm.start(name, List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
            "-D" + FdbClusterManager.CONFIG_PROPERTY + "=" + options),
        entry -> entry.contains("hazelcast") || entry.matches(".*vertx-core-[^/]*-tests\\.jar"),
        "io.vertx.launcher.application.VertxApplication", List.of(NodeVerticle.class.getName(), "-cluster"));
    return new NodeProcess(jvm);
  }

  /** Waits until the node has joined and deployed its verticle; returns its node id. */
  String awaitReady() {
    String line = jvm.awaitLine(l -> l.startsWith("READY "), START_TIMEOUT).text();
    nodeId = line.substring("READY ".length()).trim();
    return nodeId;
  }

  String nodeId() {
    return nodeId;
  }

  /** Sends a command; its answer is {@link #answer(int, Duration)}. */
  int send(String command) {
    int n = commands.incrementAndGet();
    jvm.send(n + " " + command);
    return n;
  }

  /** The answer to command {@code n}, failing on an {@code err} answer. */
  ChildJvm.Line answer(int n, Duration timeout) {
    ChildJvm.Line line = jvm.awaitLine(l -> l.startsWith("R " + n + " "), timeout);
    String prefix = "R " + n + " ok ";
    if (!line.text().startsWith(prefix)) {
      throw new AssertionError("command " + n + " failed on " + jvm + ": " + line.text());
    }
    return new ChildJvm.Line(line.text().substring(prefix.length()), line.nanoTime());
  }

  /** Sends a command and waits for its answer. */
  String call(String command, Duration timeout) {
    return answer(send(command), timeout).text();
  }

  ChildJvm jvm() {
    return jvm;
  }

  @Override
  public void close() {
    jvm.close();
  }
}
