package io.github.fdbcoord.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The service used by its Maven coordinates, as an application hosting it would: a consumer project
 * that depends on {@code io.github.fdbcoord:vertx-fdb-coordination-service} alone has its class path
 * resolved by Maven from the POMs that {@code mvn install} would install (staged by
 * maven-invoker-plugin's install goal in {@code target/consumer-repository}), and a JVM on that class
 * path deploys {@link io.github.fdbcoord.service.CoordinationVerticle} and asks it {@code /health}
 * ({@link ConsumerProbe}). A POM that lost its dependencies (shade's dependency-reduced POM did) fails
 * the deployment with a NoClassDefFoundError.
 *
 * <p>The staged repository is the consumer's local repository; every other artifact (its plugins)
 * comes from the user's local repository, searched first as a file repository, and from Maven Central
 * only when a fresh machine's build never needed it (the dependency plugin, say). Runs in the integration-test phase of {@code mvn verify} (failsafe).
 */
@Tag("slow")
class ConsumerPomIT {
  private static final String GROUP = "io.github.fdbcoord";
  private static final String SERVICE = "vertx-fdb-coordination-service";

  @Test
  void aConsumerOfTheServiceCoordinatesDeploysTheVerticle() throws Exception {
    Path work = Files.createTempDirectory(Path.of(property("consumer.repository")).getParent(), "consumer-");
    Path classPathFile = work.resolve("class-path.txt");
    Files.writeString(work.resolve("pom.xml"), consumerPom(property("consumer.version")));
    Files.writeString(work.resolve("settings.xml"), settings(Path.of(property("consumer.repository")),
        Path.of(property("consumer.userRepository"))));

    Run resolve = run(work, List.of(
        Path.of(property("consumer.mavenHome"), "bin", "mvn").toString(), "-B", "-q",
        "-s", work.resolve("settings.xml").toString(),
        "org.apache.maven.plugins:maven-dependency-plugin:" + property("consumer.dependencyPluginVersion")
            + ":build-classpath",
        "-Dmdep.includeScope=runtime", "-Dmdep.outputFile=" + classPathFile));
    assertEquals(0, resolve.exitCode, resolve::toString);

    List<String> classPath = Arrays.asList(Files.readString(classPathFile).trim().split(File.pathSeparator));
    assertTrue(classPath.stream().anyMatch(jar -> jar.endsWith(SERVICE + "-" + property("consumer.version") + ".jar")),
        "the service's plain jar on the consumer's class path: " + classPath);
    assertFalse(classPath.stream().anyMatch(jar -> jar.endsWith("-fat.jar")),
        "the fat jar is a classifier artifact, not the one a dependency gets: " + classPath);
    assertTrue(classPath.stream().anyMatch(jar -> jar.contains("micrometer-core")),
        "the service's dependencies (micrometer-core among them) come with it: " + classPath);

    List<String> entries = new ArrayList<>(classPath);
    // The probe alone: test-classes holds this module's test classes, none of its test dependencies.
    entries.add(property("consumer.testClasses"));
    Run probe = run(work, List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-cp", String.join(File.pathSeparator, entries), ConsumerProbe.class.getName()));
    assertEquals(0, probe.exitCode, probe::toString);
    assertTrue(probe.output.contains("health: 200 "), probe.toString());
  }

  private static String consumerPom(String version) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>consumer</groupId>
          <artifactId>hosts-the-service</artifactId>
          <version>1</version>
          <packaging>pom</packaging>
          <dependencies>
            <dependency>
              <groupId>%s</groupId>
              <artifactId>%s</artifactId>
              <version>%s</version>
            </dependency>
          </dependencies>
        </project>
        """.formatted(GROUP, SERVICE, version);
  }

  private static String settings(Path stagedRepository, Path userRepository) {
    return """
        <settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
          <localRepository>%2$s</localRepository>
          <profiles>
            <profile>
              <id>user-local-repository</id>
              <repositories>
                <repository><id>user-local</id><url>%1$s</url></repository>
              </repositories>
              <pluginRepositories>
                <pluginRepository><id>user-local-plugins</id><url>%1$s</url></pluginRepository>
              </pluginRepositories>
            </profile>
          </profiles>
          <activeProfiles><activeProfile>user-local-repository</activeProfile></activeProfiles>
        </settings>
        """.formatted(userRepository.toUri(), stagedRepository);
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertTrue(value != null && !value.isEmpty(), name + " is not set: run this test through failsafe (mvn verify)");
    return value;
  }

  private static Run run(Path directory, List<String> command) throws Exception {
    Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true).start();
    // Read to the end, then wait: the child cannot block on a full pipe.
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(120, TimeUnit.SECONDS), "no exit within 120 s: " + command);
    Run run = new Run(command, process.exitValue(), output);
    // Kept in failsafe's *-output.txt: what the consumer's build and JVM printed on a green run too.
    System.out.println(run);
    return run;
  }

  private record Run(List<String> command, int exitCode, String output) {
    @Override
    public String toString() {
      return "$ " + String.join(" ", command) + "\nexit " + exitCode + "\n" + output;
    }
  }
}
