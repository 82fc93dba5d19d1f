package io.github.fdbcoord.cluster.vertx;

/**
 * {@code @Tag("slow")} for vertx-core's JUnit 4 suites: junit-vintage reads no JUnit 5 tag, and reports
 * {@code @Category(Slow.class)} as the tag {@code io.github.fdbcoord.cluster.vertx.Slow}, which the fast
 * lane (the parent pom's profile fast) leaves out beside "slow".
 */
public interface Slow {}
