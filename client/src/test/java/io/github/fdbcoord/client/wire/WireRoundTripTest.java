package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.InternedPage;
import io.github.fdbcoord.api.InternedString;
import io.github.fdbcoord.api.InternerStats;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every reply and event of the protocol, encoded as the service does, through JSON text (as a
 * clustered event bus carries it), decoded as the client does.
 */
class WireRoundTripTest {
  private static final FencingToken T1 = FencingToken.parse("0000000000000001000a");
  private static final FencingToken T2 = FencingToken.parse("00000000000000020003");

  /** Through the text form: what a remote node receives. */
  private static JsonObject wire(JsonObject j) {
    return new JsonObject(j.encode());
  }

  @Test
  void protocolConstants() {
    assertEquals("action", WireProtocol.ACTION_HEADER);
    assertEquals(List.of(400, 404, 409, 503), List.of(WireProtocol.BAD_REQUEST, WireProtocol.NOT_FOUND,
        WireProtocol.CONFLICT, WireProtocol.UNAVAILABLE));
    assertEquals("fdb.directory", WireProtocol.directoryAddress(WireProtocol.DEFAULT_PREFIX));
    assertEquals("x.allocator", WireProtocol.allocatorAddress("x"));
    assertEquals("x.interner", WireProtocol.internerAddress("x"));
    assertEquals("x.mutex", WireProtocol.mutexAddress("x"));
    assertEquals("x.mutex.events.jobs", WireProtocol.mutexEventsAddress("x", "jobs"));
    assertEquals("x.liveness.id", WireProtocol.livenessAddress("x", "id"));
    assertEquals(List.of("a", "b"), WireProtocol.strings(WireProtocol.array(List.of("a", "b"))));
  }

  @Test
  void directoryInfoAndPartition() {
    DirectoryInfo info = new DirectoryInfo(List.of("a", "b"), "docs".getBytes(StandardCharsets.UTF_8),
        new byte[] {0x15, 0x2a});
    JsonObject j = wire(DirectoryWire.info(info));
    assertEquals("152a", j.getString("prefix"));
    assertEquals("docs", j.getString("layer"));
    assertFalse(j.getBoolean("partition"));
    assertEquals(info, DirectoryWire.info(j));

    DirectoryInfo partition = new DirectoryInfo(List.of("p"), DirectoryInfo.PARTITION_LAYER.getBytes(
        StandardCharsets.UTF_8), new byte[] {(byte) 0xfe});
    JsonObject pj = wire(DirectoryWire.info(partition));
    assertTrue(pj.getBoolean("partition"));
    assertTrue(DirectoryWire.info(pj).isPartition());

    DirectoryInfo noLayer = new DirectoryInfo(List.of("n"), new byte[0], new byte[] {1});
    assertEquals(noLayer, DirectoryWire.info(wire(DirectoryWire.info(noLayer))));
  }

  @Test
  void directoryPagesExistsAndRemoved() {
    DirectoryPage more = new DirectoryPage(List.of("a", "b"), true);
    JsonObject j = wire(DirectoryWire.page(more));
    assertEquals("b", j.getString("nextStartAfter"));
    assertEquals(more, DirectoryWire.page(j));
    DirectoryPage last = new DirectoryPage(List.of(), false);
    JsonObject lj = wire(DirectoryWire.page(last));
    assertFalse(lj.containsKey("nextStartAfter"));
    assertEquals(last, DirectoryWire.page(lj));

    JsonObject exists = wire(DirectoryWire.exists(List.of("a"), true));
    assertEquals(new JsonArray().add("a"), exists.getJsonArray("path"));
    assertTrue(DirectoryWire.exists(exists));
    assertFalse(DirectoryWire.exists(wire(DirectoryWire.exists(List.of("a"), false))));
    assertTrue(DirectoryWire.removed(wire(DirectoryWire.removed(List.of("a"), true))));
    assertFalse(DirectoryWire.removed(wire(DirectoryWire.removed(List.of("a"), false))));
  }

  @Test
  void allocatorValuesAndPrefixes() {
    JsonObject v = wire(AllocatorWire.value("ids", 1L << 40));
    assertEquals("ids", v.getString("name"));
    assertEquals(1L << 40, AllocatorWire.value(v));
    JsonObject p = wire(AllocatorWire.prefix("ids", new byte[] {0x00, (byte) 0xff}));
    assertEquals("00ff", p.getString("prefix"));
    assertArrayEquals(new byte[] {0x00, (byte) 0xff}, AllocatorWire.prefix(p));
  }

  @Test
  void internerIdsUseAll64Bits() {
    List<Long> ids = List.of(0L, 1L, Long.MAX_VALUE, -1L);
    JsonObject j = wire(InternerWire.interned("ns", ids));
    assertEquals("18446744073709551615", j.getJsonArray("ids").getString(3));
    assertEquals(ids, InternerWire.interned(j));
    assertEquals("18446744073709551615", InternerWire.id(-1L));

    List<OptionalLong> resolved = List.of(OptionalLong.of(-2L), OptionalLong.empty());
    JsonObject r = wire(InternerWire.resolved("ns", resolved));
    assertNull(r.getJsonArray("ids").getValue(1));
    assertEquals(resolved, InternerWire.resolved(r));

    List<Optional<String>> strings = List.of(Optional.of("a"), Optional.empty());
    assertEquals(strings, InternerWire.lookedUp(wire(InternerWire.lookedUp("ns", strings))));
    assertEquals(List.of("a", "b"), InternerWire.namespaces(wire(InternerWire.namespaces(List.of("a", "b")))));
    assertTrue(InternerWire.removed(wire(InternerWire.removed("ns", true))));
    assertFalse(InternerWire.removed(wire(InternerWire.removed("ns", false))));
  }

  @Test
  void internerStatsAndPages() {
    InternerStats stats = new InternerStats("ns", 1L << 40, 3, 20);
    JsonObject sj = wire(InternerWire.stats(stats));
    assertEquals(1L << 40, sj.getLong("strings"));
    assertEquals(stats, InternerWire.stats(sj));

    // A full page names the last id as the next page's start; ids above 2^63 keep their 64 bits.
    List<InternedString> entries = List.of(new InternedString(7, "a"), new InternedString(-1L, "z"));
    JsonObject full = wire(InternerWire.page("ns", entries, 2));
    assertEquals("18446744073709551615", full.getString("nextAfter"));
    assertEquals("18446744073709551615", full.getJsonArray("entries").getJsonObject(1).getString("id"));
    assertEquals(new InternedPage("ns", entries, OptionalLong.of(-1L)), InternerWire.page(full));

    JsonObject last = wire(InternerWire.page("ns", entries, 3));
    assertNull(last.getValue("nextAfter"));
    assertEquals(new InternedPage("ns", entries, OptionalLong.empty()), InternerWire.page(last));
    assertEquals(new InternedPage("ns", List.of(), OptionalLong.empty()),
        InternerWire.page(wire(InternerWire.page("ns", List.of(), 2))));
  }

  @Test
  void grants() {
    JsonObject held = wire(MutexWire.held("m", "a", T1));
    assertTrue(MutexWire.isHeld(held));
    assertEquals(Optional.of(T1), MutexWire.token(held));
    assertEquals(0, MutexWire.position(held));
    assertEquals(T1.toString(), held.getString("token"));

    byte[] ticket = new byte[12];
    ticket[7] = 5;
    JsonObject queued = wire(MutexWire.queued("m", "b", 2, ticket));
    assertFalse(MutexWire.isHeld(queued));
    assertEquals(Optional.empty(), MutexWire.token(queued));
    assertEquals(2, MutexWire.position(queued));
    assertEquals("000000000000000500000000", queued.getString("ticket"));
    assertNull(wire(MutexWire.queued("m", "b", 1, null)).getString("ticket"));
  }

  @Test
  void ownersAndStates() {
    MutexOwner owner = new MutexOwner("a", T1, 7);
    JsonObject beat = wire(MutexWire.owner("m", owner));
    assertEquals("m", beat.getString("name"));
    assertEquals(owner, MutexWire.owner(beat));

    MutexState state = new MutexState("m", Optional.of(owner), List.of(new QueueEntry("b", T2), new QueueEntry("c", T1)));
    JsonObject j = wire(MutexWire.state(state));
    assertTrue(j.getBoolean("held"));
    assertFalse(j.getJsonObject("owner").containsKey("name"));
    // Tickets travel as the 12-byte versionstamp of the enqueue (user version 0).
    assertEquals(T2 + "0000", j.getJsonArray("queue").getJsonObject(0).getString("ticket"));
    assertEquals(state, MutexWire.state(j));

    MutexState free = new MutexState("f", Optional.empty(), List.of());
    JsonObject fj = wire(MutexWire.state(free));
    assertFalse(fj.getBoolean("held"));
    assertNull(fj.getValue("owner"));
    assertEquals(free, MutexWire.state(fj));
    assertEquals(T2, MutexWire.ticket(MutexWire.ticket(T2)));
  }

  @Test
  void inspections() {
    MutexState state = new MutexState("m", Optional.of(new MutexOwner("a", T1, 2)), List.of(new QueueEntry("b", T2)));
    MutexInspection held = new MutexInspection(state, Optional.of(Duration.ofMillis(1500)),
        Optional.of(Duration.ofMillis(250)));
    JsonObject j = wire(MutexWire.inspection(held));
    assertEquals(1500, j.getLong("heldMs"));
    assertEquals(250, j.getLong("leaseLeftMs"));
    // The state's own fields, as the state action replies them.
    assertEquals(state, MutexWire.state(j));
    assertEquals(held, MutexWire.inspection(j));

    // Held, but the serving node runs no reaper: no lease left to report.
    MutexInspection unreaped = new MutexInspection(state, Optional.of(Duration.ofMillis(9)), Optional.empty());
    assertEquals(unreaped, MutexWire.inspection(wire(MutexWire.inspection(unreaped))));

    MutexInspection free = new MutexInspection(new MutexState("f", Optional.empty(), List.of()), Optional.empty(),
        Optional.empty());
    JsonObject fj = wire(MutexWire.inspection(free));
    assertTrue(fj.containsKey("heldMs"));
    assertNull(fj.getValue("heldMs"));
    assertEquals(free, MutexWire.inspection(fj));
  }

  @Test
  void lockEventsOfEveryType() {
    List<LockEvent> events = List.of(
        new LockEvent(LockEvent.Type.ACQUIRED, "m", T1, Optional.empty(), Optional.empty(), Optional.of("a")),
        new LockEvent(LockEvent.Type.HANDED_OFF, "m", T2, Optional.of("a"), Optional.of(T1), Optional.of("b")),
        new LockEvent(LockEvent.Type.RELEASED, "m", T2, Optional.of("b"), Optional.of(T1), Optional.empty()),
        new LockEvent(LockEvent.Type.EXPIRED, "m", T2, Optional.of("b"), Optional.of(T1), Optional.empty()));
    for (LockEvent e : events) {
      JsonObject j = wire(MutexWire.event(e));
      assertEquals(e.type().name(), j.getString("type"));
      assertEquals(e.token().map(FencingToken::toString).orElse(null), j.getString("token"));
      assertEquals(e, MutexWire.event(j));
    }
  }

  @Test
  void leaveAndHeldPages() {
    assertTrue(MutexWire.left(wire(MutexWire.left("m", "a", true))));
    assertFalse(MutexWire.left(wire(MutexWire.left("m", "a", false))));
    JsonObject full = wire(MutexWire.heldPage(List.of("a", "b"), 2));
    assertEquals("b", full.getString("nextAfter"));
    assertEquals(List.of("a", "b"), MutexWire.heldNames(full));
    assertNull(wire(MutexWire.heldPage(List.of("a"), 2)).getString("nextAfter"));
  }
}
