package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.fdb.Versionstamps;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.RegistrationInfo;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The whole key schema of the cluster manager: a pack and an unpack function for every key and
 * value, and one function per query. the membership, registration and shared-data classes
 * only compose these.
 *
 * <pre>
 * root("n", nodeId)                       = (heartbeats:int)           node record; the lease is judged on it changing
 * root("i", nodeId)                       = NodeInfo bytes             node info (host, port, metadata)
 * root("ml", vstamp)                      = (type:"added"|"left", nodeId[, "evicted"])   membership log, in commit order
 * root("mg")                              = vstamp (10 bytes)          membership generation: changes with every log entry; nodes watch it
 * root("r", address, nodeId, seq)         = (localOnly:bool)           event-bus registrations
 * root("nr", nodeId, address, seq)        = ''                         a node's registrations, to remove them with the node
 * root("rl", vstamp)                      = (address)                  registration log: which address changed, in commit order
 * root("rg")                              = vstamp                     registration generation; nodes watch it
 * root("am", map, key)                    = (deadline:int, value:bytes)  async-map entry; deadline 0 = no TTL
 * root("ttl", deadline, map, key)         = ''                         TTL index the sweeper scans
 * root("sm", map, key)                    = value bytes                sync-map entry
 * root("c", name)                         = 8-byte little-endian       counter (atomic ADD)
 * root("cl", name, vstamp)                = 8-byte little-endian       counter log: what each write batch added, in commit order;
 *                                                                       trimmed by age (CounterBatcher)
 * root("p", nodeId)                       = (port:int)                 the node's failure-detector port (its host is the node info's)
 * root("s", nodeId)                       = (suspecter:str)            a suspicion of the node; the node watches its own and refutes
 * </pre>
 *
 * <p>Time for TTLs is the database's version, which advances about 1,000,000 per second on a real
 * cluster and on the embedded engine alike: a deadline is {@code readVersion + ttl * 1000}, and an
 * entry whose deadline is at or below a transaction's read version is absent for it. No host clock
 * is compared with another's.
 */
final class ClusterSchema {
  static final String ADDED = "added";
  static final String LEFT = "left";
  /** The third element of a "left" entry that an eviction wrote. */
  static final String EVICTED = "evicted";
  /** Versions per millisecond of the database clock. */
  static final long VERSIONS_PER_MILLI = 1000;

  private static final int PAGE = 1000;

  private final Subspace root;
  private final Subspace nodes;
  private final Subspace infos;
  private final Subspace memberLog;
  private final byte[] memberGeneration;
  private final Subspace registrations;
  private final Subspace nodeRegistrations;
  private final Subspace registrationLog;
  private final byte[] registrationGeneration;
  private final Subspace asyncMaps;
  private final Subspace ttlIndex;
  private final Subspace syncMaps;
  private final Subspace counters;
  private final Subspace counterLog;
  private final Subspace probes;
  private final Subspace suspicions;

  ClusterSchema(Subspace root) {
    this.root = root;
    this.nodes = root.get("n");
    this.infos = root.get("i");
    this.memberLog = root.get("ml");
    this.memberGeneration = root.pack(Tuple.from("mg"));
    this.registrations = root.get("r");
    this.nodeRegistrations = root.get("nr");
    this.registrationLog = root.get("rl");
    this.registrationGeneration = root.pack(Tuple.from("rg"));
    this.asyncMaps = root.get("am");
    this.ttlIndex = root.get("ttl");
    this.syncMaps = root.get("sm");
    this.counters = root.get("c");
    this.counterLog = root.get("cl");
    this.probes = root.get("p");
    this.suspicions = root.get("s");
  }

  Subspace root() {
    return root;
  }

  // ------------------------------------------------------------------ value types

  /**
   * One entry of the membership log; {@code evicted} tells a "left" that another node's reaper
   * wrote from one the node wrote as it left.
   */
  record MemberChange(Versionstamp stamp, String type, String nodeId, boolean evicted) {}

  /** One entry of the registration log. */
  record RegistrationChange(Versionstamp stamp, String address) {}

  /** An async-map entry: its value bytes and its deadline (database version; 0 = none). */
  record MapEntry(long deadline, byte[] value) {
    boolean liveAt(long readVersion) {
      return deadline == 0 || deadline > readVersion;
    }
  }

  /** A log cursor that sorts after every entry committed at or before {@code version}. */
  static Versionstamp cursorAt(long version) {
    byte[] tr = ByteBuffer.allocate(10).putLong(version).putShort((short) 0xFFFF).array();
    return Versionstamp.complete(tr, 0xFFFF);
  }

  // ------------------------------------------------------------------ node records

  byte[] packNodeKey(String nodeId) {
    return nodes.pack(Tuple.from(nodeId));
  }

  String unpackNodeKey(byte[] key) {
    return nodes.unpack(key).getString(0);
  }

  byte[] packNodeValue(long heartbeats) {
    return Tuple.from(heartbeats).pack();
  }

  byte[] packInfoKey(String nodeId) {
    return infos.pack(Tuple.from(nodeId));
  }

  byte[] packInfoValue(NodeInfo info) {
    Buffer b = Buffer.buffer();
    info.writeToBuffer(b);
    return b.getBytes();
  }

  NodeInfo unpackInfoValue(byte[] value) {
    NodeInfo info = new NodeInfo();
    info.readFromBuffer(0, Buffer.buffer(value));
    return info;
  }

  /** Every node record (id → record bytes), snapshot: a reader that must not conflict with heartbeats. */
  CompletableFuture<Map<String, byte[]>> readNodes(ReadTransaction tr, Executor executor) {
    return tr.snapshot().getRange(nodes.range()).asList().thenApplyAsync(kvs -> {
      Map<String, byte[]> out = new LinkedHashMap<>();
      for (KeyValue kv : kvs) {
        out.put(unpackNodeKey(kv.getKey()), kv.getValue());
      }
      return out;
    }, executor);
  }

  /** A node's record, read with conflict: heartbeat and eviction decide on it. */
  CompletableFuture<byte[]> readNodeRecord(ReadTransaction tr, String nodeId) {
    return tr.get(packNodeKey(nodeId));
  }

  void writeNodeRecord(Transaction tr, String nodeId, long heartbeats) {
    tr.set(packNodeKey(nodeId), packNodeValue(heartbeats));
  }

  void writeNodeInfo(Transaction tr, String nodeId, NodeInfo info) {
    tr.set(packInfoKey(nodeId), packInfoValue(info));
  }

  CompletableFuture<NodeInfo> readNodeInfo(ReadTransaction tr, String nodeId) {
    return tr.get(packInfoKey(nodeId)).thenApply(v -> v == null ? null : unpackInfoValue(v));
  }

  // ------------------------------------------------------------------ failure detection

  byte[] packProbeKey(String nodeId) {
    return probes.pack(Tuple.from(nodeId));
  }

  void writeProbePort(Transaction tr, String nodeId, int port) {
    tr.set(packProbeKey(nodeId), Tuple.from(port).pack());
  }

  /** The failure-detector port of a node, or null when it runs none. */
  CompletableFuture<Integer> readProbePort(ReadTransaction tr, String nodeId) {
    return tr.get(packProbeKey(nodeId)).thenApply(v -> v == null ? null : (int) Tuple.fromBytes(v).getLong(0));
  }

  byte[] packSuspicionKey(String nodeId) {
    return suspicions.pack(Tuple.from(nodeId));
  }

  void writeSuspicion(Transaction tr, String suspect, String suspecter) {
    tr.set(packSuspicionKey(suspect), Tuple.from(suspecter).pack());
  }

  /** Who suspects {@code nodeId}, or null. */
  CompletableFuture<String> readSuspicion(ReadTransaction tr, String nodeId) {
    return tr.get(packSuspicionKey(nodeId)).thenApply(v -> v == null ? null : Tuple.fromBytes(v).getString(0));
  }

  void clearSuspicion(Transaction tr, String nodeId) {
    tr.clear(packSuspicionKey(nodeId));
  }

  CompletableFuture<Void> watchSuspicion(Transaction tr, String nodeId) {
    return tr.watch(packSuspicionKey(nodeId));
  }

  // ------------------------------------------------------------------ membership log

  byte[] packMemberLogKeyForChange() {
    return Versionstamps.packKey(memberLog.getKey(), Tuple.from(Versionstamp.incomplete(0)));
  }

  Versionstamp unpackMemberLogKey(byte[] key) {
    return memberLog.unpack(key).getVersionstamp(0);
  }

  byte[] packMemberLogValue(String type, String nodeId, boolean evicted) {
    // The cause is a third element: a node of an earlier version reads the first two and ignores it.
    return (evicted ? Tuple.from(type, nodeId, EVICTED) : Tuple.from(type, nodeId)).pack();
  }

  MemberChange unpackMemberChange(KeyValue kv) {
    Tuple t = Tuple.fromBytes(kv.getValue());
    return new MemberChange(unpackMemberLogKey(kv.getKey()), t.getString(0), t.getString(1),
        t.size() > 2 && EVICTED.equals(t.get(2)));
  }

  /** Appends a membership change and moves the generation (which every node watches). */
  void appendMemberChange(Transaction tr, String type, String nodeId) {
    appendMemberChange(tr, type, nodeId, false);
  }

  private void appendMemberChange(Transaction tr, String type, String nodeId, boolean evicted) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packMemberLogKeyForChange(), packMemberLogValue(type, nodeId, evicted));
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, memberGeneration, Versionstamps.rawValue(new byte[0]));
  }

  /** Membership changes committed after {@code cursor}, oldest first. */
  CompletableFuture<List<MemberChange>> readMemberChangesAfter(ReadTransaction tr, Versionstamp cursor, Executor executor) {
    byte[] begin = ByteArrayUtil.join(memberLog.pack(Tuple.from(cursor)), new byte[] {0});
    return tr.snapshot().getRange(begin, memberLog.range().end, PAGE).asList().thenApplyAsync(kvs -> {
      List<MemberChange> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackMemberChange(kv));
      }
      return out;
    }, executor);
  }

  CompletableFuture<Void> watchMemberGeneration(Transaction tr) {
    return tr.watch(memberGeneration);
  }

  // ------------------------------------------------------------------ registrations

  byte[] packRegistrationKey(String address, String nodeId, long seq) {
    return registrations.pack(Tuple.from(address, nodeId, seq));
  }

  byte[] packRegistrationValue(boolean localOnly) {
    return Tuple.from(localOnly).pack();
  }

  RegistrationInfo unpackRegistration(KeyValue kv) {
    Tuple k = registrations.unpack(kv.getKey());
    return new RegistrationInfo(k.getString(1), k.getLong(2), Tuple.fromBytes(kv.getValue()).getBoolean(0));
  }

  byte[] packNodeRegistrationKey(String nodeId, String address, long seq) {
    return nodeRegistrations.pack(Tuple.from(nodeId, address, seq));
  }

  byte[] packRegistrationLogKeyForChange(int userVersion) {
    return Versionstamps.packKey(registrationLog.getKey(), Tuple.from(Versionstamp.incomplete(userVersion)));
  }

  RegistrationChange unpackRegistrationChange(KeyValue kv) {
    return new RegistrationChange(registrationLog.unpack(kv.getKey()).getVersionstamp(0),
        Tuple.fromBytes(kv.getValue()).getString(0));
  }

  void writeRegistration(Transaction tr, String address, RegistrationInfo info) {
    tr.set(packRegistrationKey(address, info.nodeId(), info.seq()), packRegistrationValue(info.localOnly()));
    tr.set(packNodeRegistrationKey(info.nodeId(), address, info.seq()), new byte[0]);
  }

  void clearRegistration(Transaction tr, String address, RegistrationInfo info) {
    tr.clear(packRegistrationKey(address, info.nodeId(), info.seq()));
    tr.clear(packNodeRegistrationKey(info.nodeId(), address, info.seq()));
  }

  /**
   * Records that the registrations of {@code addresses} changed and moves the registration
   * generation. One log entry per address, told apart by the versionstamp's user version.
   */
  void appendRegistrationChanges(Transaction tr, Set<String> addresses) {
    int userVersion = 0;
    for (String address : addresses) {
      tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packRegistrationLogKeyForChange(userVersion++),
          Tuple.from(address).pack());
    }
    if (!addresses.isEmpty()) {
      tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, registrationGeneration, Versionstamps.rawValue(new byte[0]));
    }
  }

  CompletableFuture<List<RegistrationInfo>> readRegistrations(ReadTransaction tr, String address, Executor executor) {
    return tr.getRange(registrations.range(Tuple.from(address))).asList().thenApplyAsync(kvs -> {
      List<RegistrationInfo> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackRegistration(kv));
      }
      return out;
    }, executor);
  }

  /** A node's registrations as (address, seq) pairs, read with conflict (its removal must see every one). */
  CompletableFuture<List<Map.Entry<String, Long>>> readNodeRegistrations(ReadTransaction tr, String nodeId, Executor executor) {
    Subspace mine = nodeRegistrations.get(nodeId);
    return tr.getRange(mine.range()).asList().thenApplyAsync(kvs -> {
      List<Map.Entry<String, Long>> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        Tuple t = mine.unpack(kv.getKey());
        out.add(Map.entry(t.getString(0), t.getLong(1)));
      }
      return out;
    }, executor);
  }

  CompletableFuture<List<RegistrationChange>> readRegistrationChangesAfter(ReadTransaction tr, Versionstamp cursor,
      Executor executor) {
    byte[] begin = ByteArrayUtil.join(registrationLog.pack(Tuple.from(cursor)), new byte[] {0});
    return tr.snapshot().getRange(begin, registrationLog.range().end, PAGE).asList().thenApplyAsync(kvs -> {
      List<RegistrationChange> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackRegistrationChange(kv));
      }
      return out;
    }, executor);
  }

  CompletableFuture<Void> watchRegistrationGeneration(Transaction tr) {
    return tr.watch(registrationGeneration);
  }

  // ------------------------------------------------------------------ node removal and the logs' trimming

  /**
   * Removes a node with everything it owns, in one transaction: its record, its info, its
   * registrations (with one registration-log entry per address it had), and appends "left" to the
   * membership log. With {@code expectedRecord} non-null (an eviction), acts only if the record is
   * still byte for byte the one the evicting node watched expire; a heartbeat that committed in the
   * meantime makes it do nothing (and conflicts it, if concurrent).
   *
   * @return whether the node was removed
   */
  CompletableFuture<Boolean> removeNode(Transaction tr, String nodeId, byte[] expectedRecord, Executor executor) {
    return readNodeRecord(tr, nodeId).thenComposeAsync(record -> {
      if (record == null || (expectedRecord != null && !Arrays.equals(record, expectedRecord))) {
        return CompletableFuture.completedFuture(false);
      }
      return readNodeRegistrations(tr, nodeId, executor).thenApplyAsync(regs -> {
        Set<String> addresses = new LinkedHashSet<>();
        for (Map.Entry<String, Long> r : regs) {
          tr.clear(packRegistrationKey(r.getKey(), nodeId, r.getValue()));
          addresses.add(r.getKey());
        }
        tr.clear(nodeRegistrations.get(nodeId).range());
        tr.clear(packNodeKey(nodeId));
        tr.clear(packInfoKey(nodeId));
        tr.clear(packProbeKey(nodeId));
        tr.clear(packSuspicionKey(nodeId));
        appendMemberChange(tr, LEFT, nodeId, expectedRecord != null);
        appendRegistrationChanges(tr, addresses);
        return true;
      }, executor);
    }, executor);
  }

  /** Clears membership and registration log entries committed at or before {@code version}; nothing when it is not positive. */
  void trimLogs(Transaction tr, long version) {
    if (version <= 0) {
      return; // as trimCounterLog: a negative version would clear every entry
    }
    tr.clear(memberLog.range().begin, memberLog.pack(Tuple.from(cursorAt(version))));
    tr.clear(registrationLog.range().begin, registrationLog.pack(Tuple.from(cursorAt(version))));
  }

  // ------------------------------------------------------------------ async maps

  Subspace asyncMap(String map) {
    return asyncMaps.get(map);
  }

  byte[] packMapEntryKey(String map, byte[] key) {
    return asyncMap(map).pack(Tuple.from(key));
  }

  byte[] unpackMapEntryKey(String map, byte[] key) {
    return asyncMap(map).unpack(key).getBytes(0);
  }

  byte[] packMapEntryValue(MapEntry entry) {
    return Tuple.from(entry.deadline(), entry.value()).pack();
  }

  MapEntry unpackMapEntryValue(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new MapEntry(t.getLong(0), t.getBytes(1));
  }

  byte[] packTtlKey(long deadline, String map, byte[] key) {
    return ttlIndex.pack(Tuple.from(deadline, map, key));
  }

  /** The deadline of an entry written now with {@code ttlMillis} (0 or less: none). */
  static long deadline(long readVersion, long ttlMillis) {
    return ttlMillis <= 0 ? 0 : readVersion + ttlMillis * VERSIONS_PER_MILLI;
  }

  CompletableFuture<MapEntry> readMapEntry(ReadTransaction tr, String map, byte[] key) {
    return tr.get(packMapEntryKey(map, key)).thenApply(v -> v == null ? null : unpackMapEntryValue(v));
  }

  /** Writes an entry; a deadline also goes into the TTL index (stale index entries are harmless, see {@link #sweepExpired}). */
  void writeMapEntry(Transaction tr, String map, byte[] key, MapEntry entry) {
    tr.set(packMapEntryKey(map, key), packMapEntryValue(entry));
    if (entry.deadline() != 0) {
      tr.set(packTtlKey(entry.deadline(), map, key), new byte[0]);
    }
  }

  void clearMapEntry(Transaction tr, String map, byte[] key) {
    tr.clear(packMapEntryKey(map, key));
  }

  /** Every entry of a map (expired ones included: callers filter by their read version), key bytes → entry. */
  CompletableFuture<List<Map.Entry<byte[], MapEntry>>> readMapEntries(ReadTransaction tr, String map, Executor executor) {
    return tr.getRange(asyncMap(map).range()).asList().thenApplyAsync(kvs -> {
      List<Map.Entry<byte[], MapEntry>> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(Map.entry(unpackMapEntryKey(map, kv.getKey()), unpackMapEntryValue(kv.getValue())));
      }
      return out;
    }, executor);
  }

  void clearMap(Transaction tr, String map) {
    tr.clear(asyncMap(map).range());
  }

  /**
   * Removes up to {@code limit} entries whose deadline passed by {@code readVersion}, and their index
   * keys. An index key whose entry was since rewritten (another deadline, or none) only goes itself.
   *
   * @return how many index keys were processed
   */
  CompletableFuture<Integer> sweepExpired(Transaction tr, long readVersion, int limit, Executor executor) {
    byte[] end = ttlIndex.pack(Tuple.from(readVersion + 1));
    return tr.getRange(ttlIndex.range().begin, end, limit).asList().thenComposeAsync(kvs -> {
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (KeyValue kv : kvs) {
        Tuple t = ttlIndex.unpack(kv.getKey());
        long deadline = t.getLong(0);
        String map = t.getString(1);
        byte[] key = t.getBytes(2);
        tr.clear(kv.getKey());
        all.add(readMapEntry(tr, map, key).thenAccept(e -> {
          if (e != null && e.deadline() == deadline) {
            clearMapEntry(tr, map, key);
          }
        }));
      }
      return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).thenApply(v -> kvs.size());
    }, executor);
  }

  // ------------------------------------------------------------------ sync maps

  Subspace syncMap(String map) {
    return syncMaps.get(map);
  }

  byte[] packSyncKey(String map, byte[] key) {
    return syncMap(map).pack(Tuple.from(key));
  }

  byte[] unpackSyncKey(String map, byte[] key) {
    return syncMap(map).unpack(key).getBytes(0);
  }

  CompletableFuture<byte[]> readSyncValue(ReadTransaction tr, String map, byte[] key) {
    return tr.get(packSyncKey(map, key));
  }

  void writeSyncValue(Transaction tr, String map, byte[] key, byte[] value) {
    tr.set(packSyncKey(map, key), value);
  }

  void clearSyncValue(Transaction tr, String map, byte[] key) {
    tr.clear(packSyncKey(map, key));
  }

  CompletableFuture<List<KeyValue>> readSyncEntries(ReadTransaction tr, String map) {
    return tr.getRange(syncMap(map).range()).asList();
  }

  void clearSyncMap(Transaction tr, String map) {
    tr.clear(syncMap(map).range());
  }

  // ------------------------------------------------------------------ counters

  byte[] packCounterKey(String name) {
    return counters.pack(Tuple.from(name));
  }

  static byte[] packCounterValue(long value) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
  }

  static long unpackCounterValue(byte[] value) {
    if (value == null) {
      return 0;
    }
    byte[] eight = Arrays.copyOf(value, 8);
    return ByteBuffer.wrap(eight).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  /** The counter's value, read with conflict unless {@code tr} is a snapshot. */
  CompletableFuture<Long> readCounter(ReadTransaction tr, String name) {
    return tr.get(packCounterKey(name)).thenApply(ClusterSchema::unpackCounterValue);
  }

  void addToCounter(Transaction tr, String name, long delta) {
    tr.mutate(MutationType.ADD, packCounterKey(name), packCounterValue(delta));
  }

  void writeCounter(Transaction tr, String name, long value) {
    tr.set(packCounterKey(name), packCounterValue(value));
  }

  /** Appends {@code delta} to counter {@code name}'s log, under this transaction's versionstamp (user version 0). */
  void appendCounterLog(Transaction tr, String name, long delta) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY,
        Versionstamps.packKey(counterLog.getKey(), Tuple.from(name, Versionstamp.incomplete(0))), packCounterValue(delta));
  }

  /**
   * Counter {@code name}'s log from the entry of the transaction whose versionstamp is {@code stamp}
   * (10 bytes) on: that entry first when it is still there, then the entries committed after it.
   */
  CompletableFuture<List<KeyValue>> readCounterLogFrom(ReadTransaction tr, String name, byte[] stamp) {
    return tr.snapshot().getRange(packCounterLogKey(name, stamp), counterLog.range(Tuple.from(name)).end).asList();
  }

  byte[] packCounterLogKey(String name, byte[] stamp) {
    return counterLog.pack(Tuple.from(name, Versionstamp.complete(stamp, 0)));
  }

  /**
   * Clears counter {@code name}'s log entries committed at or before {@code version}; nothing when {@code version} is not
   * positive. A new FoundationDB cluster's versions start near 0, so a retention subtracted from them is negative for
   * its first minute, and a negative version packs as a cursor after every entry: clearing up to it would take the
   * entries of batches still being answered with it (their callers failed, "answered only after its log entry had
   * been trimmed", on a fresh fdbserver).
   */
  void trimCounterLog(Transaction tr, String name, long version) {
    if (version <= 0) {
      return;
    }
    tr.clear(counterLog.range(Tuple.from(name)).begin, counterLog.pack(Tuple.from(name, cursorAt(version))));
  }
}
