package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

import java.util.List;
import java.util.stream.Stream;

/**
 * Runs every {@code @TestTemplate} of a conformance class once per engine: "embedded" always,
 * "fdb" when a real cluster is reachable (skipped, saying why, otherwise). The test receives a
 * {@link Fixture}: the engine's database (shared by the class) and a random key prefix of its own
 * that is cleared afterwards.
 */
public final class EngineExtension implements TestTemplateInvocationContextProvider {
  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(EngineExtension.class);

  @Override
  public boolean supportsTestTemplate(ExtensionContext context) {
    return true;
  }

  @Override
  public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
    return Stream.of(invocation(Engines.EMBEDDED), invocation(Engines.FDB));
  }

  private static TestTemplateInvocationContext invocation(String engine) {
    return new TestTemplateInvocationContext() {
      @Override
      public String getDisplayName(int invocationIndex) {
        return "[" + engine + "]";
      }

      @Override
      public List<Extension> getAdditionalExtensions() {
        return List.of(new PerEngine(engine));
      }
    };
  }

  private static final class PerEngine implements ParameterResolver, BeforeEachCallback, AfterEachCallback {
    private final String engine;

    PerEngine(String engine) {
      this.engine = engine;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
      if (engine.equals(Engines.FDB)) {
        String reason = Engines.clusterUnavailableReason();
        org.junit.jupiter.api.Assumptions.assumeTrue(reason == null, reason);
      }
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
      return p.getParameter().getType() == Fixture.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext context) {
      Database db = sharedDatabase(context);
      Fixture fixture = new Fixture(engine, db);
      context.getStore(NS).put("fixture", fixture);
      return fixture;
    }

    @Override
    public void afterEach(ExtensionContext context) {
      Fixture fixture = context.getStore(NS).remove("fixture", Fixture.class);
      if (fixture != null) {
        fixture.close();
      }
    }

    private Database sharedDatabase(ExtensionContext context) {
      ExtensionContext classContext = context;
      while (classContext.getTestMethod().isPresent() && classContext.getParent().isPresent()) {
        classContext = classContext.getParent().get();
      }
      SharedDatabase shared = classContext.getStore(NS).getOrComputeIfAbsent(
          "db-" + engine, k -> new SharedDatabase(open(engine)), SharedDatabase.class);
      return shared.db;
    }
  }

  static Database open(String engine) {
    return engine.equals(Engines.EMBEDDED) ? Engines.openEmbedded(EmbeddedOptions.inMemory()) : Engines.openCluster();
  }

  private static final class SharedDatabase implements ExtensionContext.Store.CloseableResource {
    final Database db;

    SharedDatabase(Database db) {
      this.db = db;
    }

    @Override
    public void close() {
      Engines.close(db);
    }
  }
}
