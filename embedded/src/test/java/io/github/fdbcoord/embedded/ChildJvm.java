package io.github.fdbcoord.embedded;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Starts a test's child JVM on the test's class path. */
final class ChildJvm {
  private ChildJvm() {}

  /**
   * The command that runs {@code main} in a JVM of its own with this maximum heap. Its temporary files
   * go to {@code tmp}, which the caller removes: RocksDB extracts its native library (15 MB) into the
   * temporary directory when it loads, and a child that is killed never deletes it.
   */
  static List<String> command(Path tmp, String maxHeap, Class<?> main, String... args) {
    return command(tmp, maxHeap, List.of(), main, args);
  }

  /** As {@link #command(Path, String, Class, String...)}, with these JVM options too. */
  static List<String> command(Path tmp, String maxHeap, List<String> jvmOptions, Class<?> main, String... args) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + maxHeap, "-Djava.io.tmpdir=" + tmp));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(List.of(args));
    return command;
  }

  /**
   * SIGKILLs the child, if it still runs, and leaves its output to whoever reads it. {@link
   * Process#destroyForcibly()} also closes this JVM's end of the child's stdout, even when the child
   * already ended: the lines still in the pipe were then lost to a reader that a busy machine had not
   * yet scheduled (acknowledgements, or the line a test waits for).
   */
  static void kill(Process child) {
    child.toHandle().destroyForcibly();
  }

  /**
   * Waits for the thread that reads a child's output to reach its end (the child's exit closes the
   * pipe). The bound is for a reader that hangs: reading what an ended child left in the pipe takes
   * milliseconds, but a loaded machine may not schedule the thread for seconds.
   */
  static void joinReader(Thread reader) throws InterruptedException {
    reader.join(TimeUnit.SECONDS.toMillis(60));
    if (reader.isAlive()) {
      throw new AssertionError("the child's output did not end within 60 s of its exit");
    }
  }

  /**
   * Options for a child that lives a second or two: compiled by C1 only and with the serial
   * collector (C2's compiler threads and the parallel collector's cost most of such a JVM's CPU
   * time), loading RocksDB's native library from {@code nativeLibraryDirectory} (see {@link
   * #extractRocksDbLibrary}) instead of extracting its 15 MB again.
   */
  static List<String> shortLivedOptions(Path nativeLibraryDirectory) {
    return List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData",
        "-Djava.library.path=" + nativeLibraryDirectory);
  }

  /**
   * Copies RocksDB's native library for this platform out of its jar into {@code dir}, under the
   * name {@code System.loadLibrary} looks for, which RocksDB tries before it extracts the library
   * into the temporary directory.
   */
  static Path extractRocksDbLibrary(Path dir) throws java.io.IOException {
    String resource = org.rocksdb.util.Environment.getJniLibraryFileName("rocksdb");
    java.nio.file.Files.createDirectories(dir);
    Path target = dir.resolve(System.mapLibraryName(org.rocksdb.util.Environment.getSharedLibraryName("rocksdb")));
    try (java.io.InputStream in = org.rocksdb.RocksDB.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new java.io.FileNotFoundException(resource + " is not in RocksDB's jar");
      }
      java.nio.file.Files.copy(in, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    return dir;
  }
}
