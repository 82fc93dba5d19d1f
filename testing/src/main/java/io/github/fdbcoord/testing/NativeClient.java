package io.github.fdbcoord.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * FoundationDB's native client library ({@code libfdb_c.so}), which fdb-java needs to open a real
 * cluster. fdb-java loads it by name (found through {@code LD_LIBRARY_PATH}, which the parent pom
 * gives every test JVM) or from the file named by the system property {@value #FDB_JAVA_PROPERTY};
 * this class finds the file, sets that property, and loads the library once to prove it loads,
 * so that a test skips with a reason instead of failing inside fdb-java's static initialiser.
 */
public final class NativeClient {
  /** Environment variable naming the library file (or its folder), for machines without it on LD_LIBRARY_PATH. */
  public static final String CLIENT_LIB_ENV = "FDB_CLIENT_LIB";
  /** The system property fdb-java's JNIUtil reads before searching for {@code fdb_c} by name. */
  public static final String FDB_JAVA_PROPERTY = "FDB_LIBRARY_PATH_FDB_C";
  private static final String FILE_NAME = System.mapLibraryName("fdb_c");
  private static final List<String> SYSTEM_DIRS = List.of("/usr/lib", "/usr/local/lib", "/usr/lib64",
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib64");

  private static String unloadableReason;
  private static Path loaded;

  private NativeClient() {}

  /**
   * Loads the library (once per JVM) and returns null, or returns why it cannot be loaded.
   * On success the system property {@value #FDB_JAVA_PROPERTY} names the file, so that fdb-java
   * loads the same one, and child JVMs can be given the same property ({@link #jvmProperty()}).
   */
  public static synchronized String unloadableReason() {
    if (loaded != null || unloadableReason != null) {
      return unloadableReason;
    }
    List<Path> candidates = List.copyOf(new LinkedHashSet<>(candidates()));
    Path file = candidates.stream().filter(Files::isReadable).findFirst().orElse(null);
    if (file == null) {
      unloadableReason = "FoundationDB's native client " + FILE_NAME + " was not found (looked in " + candidates
          + "); set " + CLIENT_LIB_ENV + " or LD_LIBRARY_PATH";
      return unloadableReason;
    }
    try {
      System.load(file.toAbsolutePath().toString());
      loaded = file.toAbsolutePath();
      if (System.getProperty(FDB_JAVA_PROPERTY) == null) {
        System.setProperty(FDB_JAVA_PROPERTY, loaded.toString());
      }
      return null;
    } catch (UnsatisfiedLinkError e) {
      unloadableReason = "FoundationDB's native client " + file + " cannot be loaded: " + e.getMessage();
      return unloadableReason;
    }
  }

  /** The loaded library file, or null when {@link #unloadableReason()} said why not. */
  public static synchronized Path file() {
    unloadableReason();
    return loaded;
  }

  /** {@code -DFDB_LIBRARY_PATH_FDB_C=...} for a child JVM, or null when the library is not loadable. */
  public static String jvmProperty() {
    Path file = file();
    return file == null ? null : "-D" + FDB_JAVA_PROPERTY + "=" + file;
  }

  /** In order: FDB_CLIENT_LIB, fdb-java's own property, the binaries' lib folder, LD_LIBRARY_PATH, java.library.path, system folders. */
  private static List<Path> candidates() {
    List<Path> out = new ArrayList<>();
    String env = System.getenv(CLIENT_LIB_ENV);
    if (env != null && !env.isBlank()) {
      Path p = Path.of(env);
      out.add(Files.isDirectory(p) ? p.resolve(FILE_NAME) : p);
    }
    String property = System.getProperty(FDB_JAVA_PROPERTY);
    if (property != null && !property.isBlank()) {
      out.add(Path.of(property));
    }
    Path shared = FdbBinaries.sharedFolder();
    if (shared != null) {
      out.add(shared.resolve("lib").resolve(FILE_NAME));
    }
    addDirs(out, System.getenv("LD_LIBRARY_PATH"));
    addDirs(out, System.getProperty("java.library.path"));
    SYSTEM_DIRS.forEach(dir -> out.add(Path.of(dir, FILE_NAME)));
    return out;
  }

  private static void addDirs(List<Path> out, String pathList) {
    if (pathList == null) {
      return;
    }
    for (String dir : pathList.split(File.pathSeparator)) {
      if (!dir.isBlank()) {
        out.add(Path.of(dir, FILE_NAME));
      }
    }
  }
}
