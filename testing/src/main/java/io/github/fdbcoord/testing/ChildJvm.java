package io.github.fdbcoord.testing;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A JVM started by a test, on the test's own class path, as a real process: what a test needs to
 * run cluster nodes or service instances the way users deploy them and to crash ({@link #kill()},
 * SIGKILL) or pause ({@link #pause()}/{@link #resume()}, SIGSTOP/SIGCONT) them. Its standard output
 * and error (merged) are kept line by line with the time each arrived, so that a test can wait for
 * a line ({@link #awaitLine}) and measure when it came; its standard input takes commands
 * ({@link #send}). The child loads the same FoundationDB native client as this JVM
 * ({@link NativeClient#jvmProperty()}) and inherits the environment (surefire's LD_LIBRARY_PATH).
 */
public final class ChildJvm implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Writer stdin;
  private final List<Line> lines = new ArrayList<>();
  private final Thread reader;
  private final CompletableFuture<Long> exitedAt;

  /** One line of the child's output and {@link System#nanoTime()} when it was read. */
  public record Line(String text, long nanoTime) {}

  /** The child's exit status and {@link System#nanoTime()} when this JVM saw it exit. */
  public record Exit(int status, long nanoTime) {}

  private ChildJvm(String name, Process process) {
    this.name = name;
    this.process = process;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.exitedAt = process.onExit().thenApply(p -> System.nanoTime());
    this.reader = new Thread(this::readOutput, "child-jvm-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code mainClass args} in a new JVM with this JVM's test class path (without the entries
   * {@code excluded} matches) and the given JVM options.
   */
  public static ChildJvm start(String name, List<String> jvmOptions, Predicate<String> excluded, String mainClass,
      List<String> args) {
    String classPath = Arrays.stream(testClassPath().split(File.pathSeparator))
        .filter(entry -> !entry.isBlank() && !excluded.test(entry))
        .collect(Collectors.joining(File.pathSeparator));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    String nativeClient = NativeClient.jvmProperty();
    if (nativeClient != null) {
      command.add(nativeClient);
    }
    command.add("-cp");
    command.add(classPath);
    command.add(mainClass);
    command.addAll(args);
    try {
      return new ChildJvm(name, new ProcessBuilder(command).redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the child JVM " + name, e);
    }
  }

  /** Surefire runs the tests from a manifest-only jar; the real class path is in this property. */
  private static String testClassPath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  private void readOutput() {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String text;
      while ((text = in.readLine()) != null) {
        synchronized (lines) {
          lines.add(new Line(text, System.nanoTime()));
          lines.notifyAll();
        }
      }
    } catch (IOException ignored) {
      // the process was killed: its output ends here
    }
  }

  /** The process id, for signals. */
  public long pid() {
    return process.pid();
  }

  /** Writes one line to the child's standard input. */
  public void send(String line) {
    try {
      stdin.write(line + "\n");
      stdin.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write to the child JVM " + name + " (" + describeExit() + ")", e);
    }
  }

  /**
   * The first line (from the start of the output) that {@code matches}, waiting up to
   * {@code timeout} for it.
   *
   * @throws AssertionError naming the child and its last lines when none came in time
   */
  public Line awaitLine(Predicate<String> matches, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lines) {
      int scanned = 0;
      while (true) {
        for (; scanned < lines.size(); scanned++) {
          if (matches.test(lines.get(scanned).text())) {
            return lines.get(scanned);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("no expected line from " + name + " within " + timeout.toMillis() + " ms ("
              + describeExit() + "); its last lines:\n" + tail(40));
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(lines, Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
      }
    }
  }

  /** Whether a line matching {@code matches} has arrived so far. */
  public boolean hasLine(Predicate<String> matches) {
    synchronized (lines) {
      return lines.stream().anyMatch(l -> matches.test(l.text()));
    }
  }

  /** The last {@code count} lines of output, for failure messages. */
  public String tail(int count) {
    synchronized (lines) {
      return lines.subList(Math.max(0, lines.size() - count), lines.size()).stream().map(Line::text)
          .collect(Collectors.joining("\n"));
    }
  }

  /** Whether the process is running (a paused process is). */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL, as a crash: nothing of the child runs after this. Waits until it is gone. */
  public void kill() {
    // Through the handle: Process.destroy*() also closes this side of the child's output pipe, and
    // the lines still in it would be lost to the reader.
    process.toHandle().destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * SIGTERM, as a service manager, a container runtime or Ctrl-C stops a process: its shutdown hooks
   * run. Returns at once; {@link #awaitExit} waits for the end.
   */
  public void terminate() {
    // Through the handle, so that what the child prints while it stops reaches the reader
    // (Process.destroy() closes this side of the pipe: a test could never see a shutdown warning).
    process.toHandle().destroy();
  }

  /**
   * Waits up to {@code timeout} for the process to exit and for its output to be read to the end;
   * returns its exit status and when it exited (a test may have waited for something else first).
   *
   * @throws AssertionError naming the child and its last lines when it is still running
   */
  public Exit awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError(name + " still runs " + timeout.toMillis() + " ms later; its last lines:\n" + tail(40));
      }
      // The output pipe closes with the process: the reader ends soon after it.
      reader.join(TimeUnit.SECONDS.toMillis(10));
      return new Exit(process.exitValue(), exitedAt.get(10, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("the exit of " + name + " was not reported", e);
    }
  }

  /** SIGSTOP: every thread of the child stops where it is (a long GC pause, a frozen VM). */
  public void pause() {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause()}. */
  public void resume() {
    signal("CONT");
  }

  private void signal(String signal) {
    Signals.send(pid(), signal);
  }

  private String describeExit() {
    return process.isAlive() ? "running" : "exited with " + process.exitValue();
  }

  /**
   * SIGTERM (the child's shutdown hooks run), then SIGKILL after 10 s; a paused child is resumed
   * first so that it can act on the SIGTERM.
   */
  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    try {
      signal("CONT");
    } catch (RuntimeException ignored) {
      // it exited meanwhile
    }
    process.toHandle().destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        kill();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      kill();
    }
  }

  @Override
  public String toString() {
    return "ChildJvm(" + name + ", pid " + pid() + ")";
  }
}
