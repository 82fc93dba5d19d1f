package io.github.fdbcoord.testing;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parent pom's surefire wiring and the native client lookup it feeds. */
class NativeClientTest {
  @Test
  void surefireGivesTheProjectsClientLibraryFirstOnTheLibraryPath() {
    String root = System.getProperty(FdbBinaries.ROOT_PROPERTY);
    assertNotNull(root, "surefire sets " + FdbBinaries.ROOT_PROPERTY);
    String first = System.getenv("LD_LIBRARY_PATH").split(java.io.File.pathSeparator)[0];
    assertEquals(Path.of(root, "..", "shared", "fdb", "lib").normalize(), Path.of(first).normalize());
    assertTrue(!System.getenv("LD_LIBRARY_PATH").contains("${"), "no unresolved property: " + System.getenv("LD_LIBRARY_PATH"));
  }

  @Test
  void loadsTheSharedClientAndNamesItForFdbJava() {
    Path shared = FdbBinaries.sharedFolder();
    Assumptions.assumeTrue(shared != null && Files.isReadable(shared.resolve("lib/libfdb_c.so")),
        "no ../shared/fdb/lib/libfdb_c.so beside the project");
    assertNull(NativeClient.unloadableReason());
    assertNotNull(NativeClient.file());
    assertEquals(NativeClient.file().toString(), System.getProperty(NativeClient.FDB_JAVA_PROPERTY));
    assertEquals("-D" + NativeClient.FDB_JAVA_PROPERTY + "=" + NativeClient.file(), NativeClient.jvmProperty());
  }
}
