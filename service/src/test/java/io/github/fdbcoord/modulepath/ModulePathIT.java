package io.github.fdbcoord.modulepath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Starts the packaged jars on the JPMS module path, as a modular application would: the service's jar
 * and its runtime dependencies (the other modules' jars among them, written by
 * maven-dependency-plugin at package time), and the client jar with the api and vertx-core alone.
 * Every resolution problem (two jars with one package, a module name missing or taken twice) fails
 * the start with a ResolutionException or a LayerInstantiationException; the probes then run real
 * code across the modules.
 *
 * <p>Runs in the integration-test phase of {@code mvn verify} (failsafe): it needs the jars.
 */
@Tag("slow")
class ModulePathIT {
  private static final String OUR_JAR = "vertx-fdb-coordination-";

  private static List<Path> serviceModulePath;
  private static Path testClasses;

  @BeforeAll
  static void readTheRuntimeClassPath() throws IOException {
    Path runtimeClassPath = Path.of(property("modulePath.runtimeClassPath"));
    List<Path> jars = new ArrayList<>();
    jars.add(Path.of(property("modulePath.serviceJar")));
    for (String entry : Files.readString(runtimeClassPath).trim().split(File.pathSeparator)) {
      jars.add(Path.of(entry));
    }
    serviceModulePath = List.copyOf(jars);
    testClasses = Path.of(property("modulePath.testClasses"));
  }

  @Test
  void everyJarOfThisProjectNamesItsModule() throws IOException {
    List<Path> ours = serviceModulePath.stream().filter(ModulePathIT::isOurs).toList();
    assertEquals(List.of("api", "client", "cluster", "embedded", "layers", "service", "store"),
        ours.stream().map(ModulePathIT::moduleOfOurJar).sorted().toList(),
        "the jars of this project on the service's runtime path: " + ours);
    for (Path jar : ours) {
      try (JarFile file = new JarFile(jar.toFile())) {
        assertEquals("io.github.fdbcoord." + moduleOfOurJar(jar),
            file.getManifest().getMainAttributes().getValue("Automatic-Module-Name"), jar + ": Automatic-Module-Name");
      }
    }
  }

  @Test
  void theServiceStartsOnTheModulePath() throws Exception {
    Run run = java(serviceModulePath, null,
        "-m", "io.github.fdbcoord.service/io.github.fdbcoord.service.CoordinationMain", "--help");
    run.assertClean();
    assertTrue(run.output.contains("usage:"), run.toString());
  }

  @Test
  void theLayersOpenAnInMemoryStoreAcrossModules() throws Exception {
    Run run = java(serviceModulePath, testClasses, LayersProbe.class.getName());
    run.assertClean();
    assertTrue(run.output.contains("store module: io.github.fdbcoord.store"), run.toString());
    assertTrue(run.output.contains("layers module: io.github.fdbcoord.layers"), run.toString());
    // Store found the engine through ServiceLoader: the database is the embedded module's.
    assertTrue(run.output.contains("database module: io.github.fdbcoord.embedded"), run.toString());
  }

  @Test
  void theClientStartsWithTheApiAndVertxCoreAlone() throws Exception {
    List<Path> clientPath = serviceModulePath.stream().filter(ModulePathIT::isClientDependency).toList();
    Run run = java(clientPath, testClasses, ClientProbe.class.getName());
    run.assertClean();
    assertTrue(run.output.contains("client module: io.github.fdbcoord.client"), run.toString());
    assertTrue(run.output.contains("reply: {\"n\":7,\"action\":\"echo\"}"), run.toString());
  }

  /**
   * The client, the api, and vertx-core with its own runtime dependencies (vertx-core-logging, Netty,
   * jackson-core), picked from the service's path by their Maven coordinates as the local repository
   * lays them out.
   */
  private static boolean isClientDependency(Path jar) {
    String name = jar.getFileName().toString();
    if (isOurs(jar)) {
      return name.startsWith(OUR_JAR + "client-") || name.startsWith(OUR_JAR + "api-");
    }
    String path = jar.toString().replace(File.separatorChar, '/');
    return path.contains("/io/vertx/vertx-core/") || path.contains("/io/vertx/vertx-core-logging/")
        || path.contains("/io/netty/") || path.contains("/com/fasterxml/jackson/core/jackson-core/");
  }

  private static boolean isOurs(Path jar) {
    return jar.getFileName().toString().startsWith(OUR_JAR);
  }

  /** {@code vertx-fdb-coordination-layers-0.1.0-SNAPSHOT.jar} is {@code layers}. */
  private static String moduleOfOurJar(Path jar) {
    String rest = jar.getFileName().toString().substring(OUR_JAR.length());
    return rest.substring(0, rest.indexOf('-'));
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertTrue(value != null && !value.isEmpty(), name + " is not set: run this test through failsafe (mvn verify)");
    return value;
  }

  /** Runs a JVM with {@code modulePath} (every module resolved) and, if given, {@code classPath}. */
  private static Run java(List<Path> modulePath, Path classPath, String... mainAndArgs) throws Exception {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "--module-path", modulePath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)),
        "--add-modules", "ALL-MODULE-PATH"));
    if (classPath != null) {
      command.addAll(List.of("-cp", classPath.toString()));
    }
    command.addAll(Arrays.asList(mainAndArgs));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    // The output is small: read it to the end, then wait (the JVM cannot block on a full pipe).
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(120, TimeUnit.SECONDS), "no exit within 120 s: " + command);
    Run run = new Run(command, process.exitValue(), output);
    // Kept in failsafe's *-output.txt: what the modules printed on a green run too.
    System.out.println(run);
    return run;
  }

  private record Run(List<String> command, int exitCode, String output) {
    void assertClean() {
      assertFalse(output.contains("ResolutionException"), this::toString);
      assertFalse(output.contains("LayerInstantiationException"), this::toString);
      assertEquals(0, exitCode, this::toString);
    }

    @Override
    public String toString() {
      return "exit " + exitCode + " of " + String.join(" ", command) + "\n" + output;
    }
  }
}
