package io.github.fdbcoord.embedded;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts a test's child JVM on the test's class path. */
final class ChildJvm {
  private ChildJvm() {}

  /**
   * The command that runs {@code main} in a JVM of its own with this maximum heap. Its temporary files
   * go to {@code tmp}, which the caller removes: RocksDB extracts its native library (15 MB) into the
   * temporary directory when it loads, and a child that is killed never deletes it.
   */
  static List<String> command(Path tmp, String maxHeap, Class<?> main, String... args) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + maxHeap, "-Djava.io.tmpdir=" + tmp,
        "-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(List.of(args));
    return command;
  }
}
