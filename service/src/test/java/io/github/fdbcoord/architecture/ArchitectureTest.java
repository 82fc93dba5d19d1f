package io.github.fdbcoord.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apiguardian.api.API;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The rules that hold across modules (design.md, "Layout"), checked over the main classes of every
 * module: this module's test class path holds them all (in the reactor, each sibling's
 * {@code target/classes} or packaged jar). Test classes and test-jars are left out, so that fixtures
 * may break the rules (a test of the layers runs on the embedded engine).
 *
 * <p>Each rule is its own test: a violation fails it with ArchUnit's message, which names the rule
 * and every offending class, member and line.
 */
class ArchitectureTest {

  private static final String ROOT = "io.github.fdbcoord";

  /** The layers: on fdb-java's interfaces, never on the engine or on Vert.x. */
  private static final String[] LAYERS = {
      ROOT + ".directory..", ROOT + ".allocator..", ROOT + ".interner..", ROOT + ".mutex..", ROOT + ".election..",
      ROOT + ".rwlock..", ROOT + ".semaphore..",
      ROOT + ".coalescing..", ROOT + ".fdb..", ROOT + ".store..", ROOT + ".api.."};

  /**
   * The packages of vertx-core-logging, the dependency-free jar through which the layers and the
   * engine log (its module is {@code io.vertx.core.logging}; the logger they use is in
   * {@code io.vertx.core.internal.logging}).
   */
  private static final String[] VERTX_CORE_LOGGING = {
      "io.vertx.core.logging..", "io.vertx.core.internal.logging..", "io.vertx.core.spi.logging.."};

  private static final String EMBEDDED = ROOT + ".embedded";

  private static JavaClasses mainClasses;

  @BeforeAll
  static void importMainClasses() {
    // One import for every rule, with only fdb-java's classes resolved beyond the project's own
    // (FdbJavaClassResolver says why); the scope keeps the setting to this import.
    mainClasses = ArchConfiguration.withThreadLocalScope(configuration -> {
      configuration.setClassResolver(FdbJavaClassResolver.class);
      return new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .withImportOption(ArchitectureTest::isNotATestJar)
          .importPackages(ROOT);
    });
    // A rule over no classes passes: make sure the import found every module's main code.
    for (String pkg : new String[] {"api", "store", "embedded", "directory", "client", "cluster", "service"}) {
      String name = ROOT + "." + pkg;
      assertTrue(mainClasses.stream().anyMatch(c -> c.getPackageName().startsWith(name)),
          "the class path holds no main classes of " + ROOT + "." + pkg);
    }
    assertTrue(mainClasses.stream().noneMatch(c -> c.getSimpleName().endsWith("Test")),
        "test classes were imported");
  }

  /**
   * Test-jars (the embedded module's fixtures) and the {@code testing} module (the real FoundationDB
   * fixture, a test-scope dependency only) hold test code, which the rules do not cover.
   */
  private static boolean isNotATestJar(Location location) {
    return !location.contains("-tests.jar") && !location.contains("/test-classes/")
        && !location.contains("vertx-fdb-coordination-testing") && !location.contains("/testing/target/");
  }

  @Test
  void noCyclesBetweenPackages() {
    check(slices().matching(ROOT + ".(**)")
        .as("packages of " + ROOT)
        .should().beFreeOfCycles()
        .because("a package that depends on another must not be depended on by it (design.md, Layout)"));
  }

  @Test
  void layersDependNeitherOnTheEngineNorOnVertxNorOnNetty() {
    DescribedPredicate<JavaClass> vertxBeyondLogging = resideInAPackage("io.vertx..")
        .and(not(resideInAnyPackage(VERTX_CORE_LOGGING)))
        .as("belong to Vert.x (other than vertx-core-logging)");
    check(noClasses().that().resideInAnyPackage(LAYERS)
        .should().dependOnClassesThat(resideInAPackage(EMBEDDED + "..")
            .or(vertxBeyondLogging)
            .or(resideInAPackage("io.netty..")))
        .because("the layers run on fdb-java's interfaces alone: a real-cluster user pulls neither"
            + " the embedded engine (RocksDB) nor Vert.x; they log through vertx-core-logging"));
  }

  @Test
  void onlyTheEngineReachesItsInternals() {
    check(noClasses().that().resideOutsideOfPackage(EMBEDDED + "..")
        .should().dependOnClassesThat(resideInAPackage(EMBEDDED + "..")
            .and(not(resideInAPackage(EMBEDDED)))
            .as("reside in a subpackage of " + EMBEDDED))
        .because("the engine's public surface is its root package (EmbeddedDatabase, EmbeddedOptions);"
            + " its subpackages may change with no notice"));
  }

  @Test
  void onlyTheStoreTouchesTheFdbClass() {
    check(noClasses().that().resideOutsideOfPackage(ROOT + ".store..")
        .should().dependOnClassesThat(nameIsOrIsNestedIn("com.apple.foundationdb.FDB"))
        .because("Store opens every Database, real or embedded: FDB.selectAPIVersion once per JVM,"
            + " the native client's network thread started by one class"));
  }

  @Test
  void onlyTheStoreCallsTheNativeOnlyHelpersOfFdbJava() {
    check(noClasses().that().resideOutsideOfPackage(ROOT + ".store..")
        .should().callMethodWhere(nativeOnlyHelper())
        .because("these methods call into the native client library, which an embedded store never"
            + " loads (design.md, Pitfall): use io.github.fdbcoord.fdb's helpers"));
  }

  @Test
  void theClientNeedsOnlyTheApiVertxCoreAndTheJdk() {
    check(classes().that().resideInAPackage(ROOT + ".client..")
        .should().onlyDependOnClassesThat().resideInAnyPackage(
            ROOT + ".client..", ROOT + ".api..", "io.vertx.core..", "java..", "org.apiguardian.api..")
        .because("a client-only node carries vertx-core and the api jar, nothing of the store,"
            + " the engine or the service"));
  }

  @Test
  void theClusterManagerNeverDependsOnTheEngineOrTheService() {
    check(noClasses().that().resideInAPackage(ROOT + ".cluster..")
        .should().dependOnClassesThat().resideInAnyPackage(EMBEDDED + "..", ROOT + ".service..")
        .because("the cluster manager runs on any store, real or embedded, without the service"));
  }

  @Test
  void theServiceDependsDownwardFromItsTopThroughHttpToTheEventBus() {
    check(layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("top").definedBy(ROOT + ".service")
        .layer("http").definedBy(ROOT + ".service.http..")
        .layer("eventbus").definedBy(ROOT + ".service.eventbus..")
        .whereLayer("top").mayNotBeAccessedByAnyLayer()
        .whereLayer("http").mayOnlyBeAccessedByLayers("top")
        .whereLayer("eventbus").mayOnlyBeAccessedByLayers("top", "http")
        .because("the service's packages have one direction: its configuration and main deploy the HTTP face,"
            + " which forwards to the verticles that host the layers on the event bus (an options object, not the"
            + " configuration, carries what the lower packages need)"));
  }

  /**
   * Each package marked {@code @API(status = INTERNAL)} and the packages that may use it: its own
   * module (and, for the wire format, the service at the other end of it).
   */
  private static final Map<String, String[]> INTERNAL_USERS = Map.ofEntries(
      entry(EMBEDDED + ".bytes", new String[] {EMBEDDED + ".."}),
      entry(EMBEDDED + ".client", new String[] {EMBEDDED + ".."}),
      entry(EMBEDDED + ".engine", new String[] {EMBEDDED + ".."}),
      entry(EMBEDDED + ".log", new String[] {EMBEDDED + ".."}),
      entry(EMBEDDED + ".resolver", new String[] {EMBEDDED + ".."}),
      entry(EMBEDDED + ".storage", new String[] {EMBEDDED + ".."}),
      entry(ROOT + ".cluster.impl", new String[] {ROOT + ".cluster.."}),
      entry(ROOT + ".client.wire", new String[] {ROOT + ".client..", ROOT + ".service.."}),
      entry(ROOT + ".coalescing", new String[] {ROOT + ".coalescing..", ROOT + ".allocator..", ROOT + ".interner.."}),
      entry(ROOT + ".service.http", new String[] {ROOT + ".service.."}),
      entry(ROOT + ".service.eventbus", new String[] {ROOT + ".service.."}));

  @Test
  void everyPackageSaysWhetherItIsApiOrInternal() {
    Set<String> internal = new TreeSet<>();
    Set<String> unmarked = new TreeSet<>();
    for (String pkg : mainClasses.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new))) {
      if (pkg.startsWith(ROOT + ".testing")) {
        continue;
      }
      Optional<API> api = mainClasses.getPackage(pkg).tryGetAnnotationOfType(API.class);
      if (api.isEmpty()) {
        unmarked.add(pkg);
      } else if (api.get().status() == API.Status.INTERNAL) {
        internal.add(pkg);
      }
    }
    assertEquals(Set.of(), unmarked, "packages without @API in their package-info.java");
    assertEquals(new TreeSet<>(INTERNAL_USERS.keySet()), internal,
        "the internal packages and the rule's list of who may use them differ");
  }

  @Test
  void internalPackagesAreUsedOnlyByTheirOwnModule() {
    for (Map.Entry<String, String[]> e : INTERNAL_USERS.entrySet()) {
      check(noClasses().that().resideOutsideOfPackages(e.getValue())
          .should().dependOnClassesThat().resideInAPackage(e.getKey())
          .because(e.getKey() + " is @API(status = INTERNAL): it may change in any release"));
    }
  }

  @Test
  void noStaticMutableState() {
    check(fields().that().areDeclaredInClassesThat().resideInAPackage(ROOT + "..")
        .and().areStatic()
        .should().beFinal()
        .because("state shared by every instance in the JVM outlives a Vertx, a store or a test:"
            + " keep it in an instance"));
  }

  private static void check(ArchRule rule) {
    rule.check(mainClasses);
  }

  private static DescribedPredicate<JavaClass> nameIsOrIsNestedIn(String className) {
    return DescribedPredicate.describe("are " + className + " (or nested in it)",
        c -> c.getName().equals(className) || c.getName().startsWith(className + "$"));
  }

  /**
   * Tuple/Subspace.packWithVersionstamp and FDBException's retry predicates, whatever subtype the
   * call names (a DirectorySubspace is a Subspace).
   */
  private static DescribedPredicate<JavaMethodCall> nativeOnlyHelper() {
    Set<String> retryPredicates = Set.of("isRetryable", "isMaybeCommitted", "isRetryableNotCommitted");
    return DescribedPredicate.describe(
        "Tuple/Subspace.packWithVersionstamp or FDBException." + retryPredicates.stream().sorted().toList(),
        call -> {
          String name = call.getTarget().getName();
          JavaClass owner = call.getTargetOwner();
          if (name.equals("packWithVersionstamp")) {
            return owner.isAssignableTo("com.apple.foundationdb.tuple.Tuple")
                || owner.isAssignableTo("com.apple.foundationdb.subspace.Subspace");
          }
          return retryPredicates.contains(name) && owner.isAssignableTo("com.apple.foundationdb.FDBException");
        });
  }
}
