package io.github.fdbcoord.cluster.impl;

/** Reads what the cluster manager stored, for tests that check the store itself (not only what the API returns). */
public final class StoreProbe {
  private StoreProbe() {}

  /**
   * Whether node {@code nodeId}'s record is missing and whether {@code address} has registrations,
   * read in one transaction (so an eviction is seen whole or not at all).
   */
  public static boolean[] recordMissingAndRegistered(ClusterStore store, String nodeId, String address) {
    return store.read(tr -> store.schema().readNodeRecord(tr, nodeId).thenCombine(
        store.schema().readRegistrations(tr, address, store.executor()),
        (record, regs) -> new boolean[] {record == null, !regs.isEmpty()})).join();
  }

  /** Removes node {@code nodeId} as another node's reaper evicts it; completes with whether it was there. */
  public static java.util.concurrent.CompletableFuture<Boolean> evict(ClusterStore store, String nodeId) {
    return store.run(tr -> store.schema().removeNode(tr, nodeId, null, store.executor()));
  }

  /** Makes {@code detector}'s node suspect {@code peer} now, as if its connection to the peer had failed. */
  public static void suspect(FailureDetector detector, String peer) {
    detector.suspectNow(peer, "suspected by a test");
  }

  /** Whether node {@code nodeId} is suspected at the moment. */
  public static boolean suspected(ClusterStore store, String nodeId) {
    return store.read(tr -> store.schema().readSuspicion(tr, nodeId)).join() != null;
  }

  /** The stored value of async-map entry {@code key} of {@code map}, expired or not; null when no entry is stored. */
  public static byte[] rawAsyncMapValue(ClusterStore store, String map, Object key) {
    return store.read(tr -> store.schema().readMapEntry(tr, map, ClusterValues.encode(key))
        .thenApply(e -> e == null ? null : e.value())).join();
  }

  /** Publishes {@code port} as node {@code nodeId}'s detector port, as if its detector had moved there. */
  public static void publishDetectorPort(ClusterStore store, String nodeId, int port) {
    store.run(tr -> {
      store.schema().writeProbePort(tr, nodeId, port);
      return java.util.concurrent.CompletableFuture.completedFuture(null);
    }).join();
  }

  /** The peers {@code detector}'s node holds a connection to now. */
  public static java.util.Set<String> detectorPeers(FailureDetector detector) {
    return detector.connectedPeers();
  }

  /** The host and port {@code detector}'s server listens on. */
  public static String detectorAddress(FailureDetector detector) {
    return detector.host() + ":" + detector.port();
  }

  /** The connections {@code detector}'s server holds open now, and the most it keeps. */
  public static int[] detectorConnections(FailureDetector detector) {
    return new int[] {detector.acceptedConnections(), detector.maxConnections()};
  }

  /**
   * Makes every counter attempt of {@code store}'s node run {@code hook} between its writes and its commit
   * (null: none); a failed future fails the attempt as a failed commit would.
   */
  public static void beforeCounterCommit(ClusterStore store,
      java.util.function.Function<com.apple.foundationdb.Transaction, java.util.concurrent.CompletableFuture<Void>> hook) {
    store.counterBeforeCommit = hook;
  }

  /** The counter transactions {@code store}'s node has committed and attempted so far. */
  public static long[] counterCommitsAndAttempts(ClusterStore store) {
    return new long[] {store.counterCommits.sum(), store.counterAttempts.sum()};
  }
}
