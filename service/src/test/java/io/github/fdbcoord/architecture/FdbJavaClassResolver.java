package io.github.fdbcoord.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.resolvers.ClassResolver;
import com.tngtech.archunit.core.importer.resolvers.ClassResolverFromClasspath;

import java.util.Optional;

/**
 * Resolves from the class path only the classes of fdb-java that the project's classes refer to; every
 * other referred class (the JDK, Vert.x, Netty, RocksDB, ...) stays a stub that knows its name alone.
 * ArchitectureTest's rules match those by name and package, but one needs fdb-java's hierarchy: a call
 * to {@code DirectorySubspace.packWithVersionstamp} is a call to Subspace's. Resolving everything, as
 * ArchUnit does by default, made the test cost a third more CPU (7 s against 5 s on the project's
 * two-core machine), for classes no rule looks at.
 * Public with a public constructor: ArchUnit instantiates it by name.
 */
public final class FdbJavaClassResolver implements ClassResolver {

  private final ClassResolverFromClasspath classPath = new ClassResolverFromClasspath();

  @Override
  public void setClassUriImporter(ClassUriImporter classUriImporter) {
    classPath.setClassUriImporter(classUriImporter);
  }

  @Override
  public Optional<JavaClass> tryResolve(String typeName) {
    return typeName.startsWith("com.apple.foundationdb.") ? classPath.tryResolve(typeName) : Optional.empty();
  }
}
