package io.github.fdbcoord.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** POSIX signals to processes the tests started (SIGSTOP/SIGCONT/SIGTERM), through {@code kill}. */
final class Signals {
  private Signals() {
  }

  /** Sends {@code signal} (a name such as {@code STOP}) to {@code pid}; fails, saying why, when {@code kill} does. */
  static void send(long pid, String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
            + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
