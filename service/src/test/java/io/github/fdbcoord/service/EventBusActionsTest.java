package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.github.fdbcoord.service.eventbus.FailureCodes.BAD_REQUEST;
import static io.github.fdbcoord.service.eventbus.FailureCodes.CONFLICT;
import static io.github.fdbcoord.service.eventbus.FailureCodes.NOT_FOUND;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every event-bus action of every layer: its success and each of its failure codes. */
@ExtendWith(VertxExtension.class)
class EventBusActionsTest {
  private ServiceFixture f;
  private String dirs;
  private String alloc;
  private String interner;
  private String mutex;

  @BeforeEach
  void start(Vertx vertx) {
    f = ServiceFixture.start(vertx);
    dirs = f.client.directoryAddress();
    alloc = f.client.allocatorAddress();
    interner = f.client.internerAddress();
    mutex = f.client.mutexAddress();
  }

  @AfterEach
  void stop() {
    f.close();
  }

  private static JsonObject path(List<String> p) {
    return new JsonObject().put("path", new JsonArray(new ArrayList<>(p)));
  }

  @Test
  void directoryActions() {
    List<String> a = f.dir("a");
    JsonObject created = f.request(dirs, "create", path(a).put("layer", "docs"));
    assertEquals(new JsonArray(new ArrayList<>(a)), created.getJsonArray("path"));
    assertEquals("docs", created.getString("layer"));
    assertFalse(created.getString("prefix").isEmpty());
    f.failure(dirs, "create", path(a), CONFLICT, "already_exists");

    JsonObject opened = f.request(dirs, "open", path(a));
    assertEquals(created.getString("prefix"), opened.getString("prefix"));
    f.failure(dirs, "open", path(a).put("layer", "other"), CONFLICT, "layer_mismatch");
    f.failure(dirs, "open", path(f.dir("missing")), NOT_FOUND, "not_found");

    assertEquals(created.getString("prefix"), f.request(dirs, "createOrOpen", path(a)).getString("prefix"));
    JsonObject b = f.request(dirs, "createOrOpen", path(f.dir("b")));
    assertNotEquals(created.getString("prefix"), b.getString("prefix"));

    JsonObject partition = f.request(dirs, "create", path(f.dir("p")).put("partition", true));
    assertTrue(partition.getBoolean("partition"));

    assertTrue(f.request(dirs, "exists", path(a)).getBoolean("exists"));
    assertFalse(f.request(dirs, "exists", path(f.dir("nope"))).getBoolean("exists"));

    JsonObject page = f.request(dirs, "list", path(f.dir()).put("limit", 2));
    assertEquals(new JsonArray().add("a").add("b"), page.getJsonArray("names"));
    assertTrue(page.getBoolean("hasMore"));
    JsonObject next = f.request(dirs, "list", path(f.dir()).put("startAfter", page.getString("nextStartAfter")));
    assertEquals(new JsonArray().add("p"), next.getJsonArray("names"));
    assertFalse(next.getBoolean("hasMore"));
    f.failure(dirs, "list", path(f.dir("nope")), NOT_FOUND, "not_found");
    f.failure(dirs, "list", path(f.dir()).put("limit", 0), BAD_REQUEST, "bad_request");

    JsonObject moved = f.request(dirs, "move", new JsonObject().put("from", new JsonArray(a))
        .put("to", new JsonArray(f.dir("c"))));
    assertEquals(created.getString("prefix"), moved.getString("prefix"));
    f.failure(dirs, "move", new JsonObject().put("from", new JsonArray(a)).put("to", new JsonArray(f.dir("d"))),
        NOT_FOUND, "not_found");
    f.failure(dirs, "move", new JsonObject().put("from", new JsonArray(f.dir("b")))
        .put("to", new JsonArray(f.dir("c"))), CONFLICT, "already_exists");

    assertTrue(f.request(dirs, "remove", path(f.dir("c"))).getBoolean("removed"));
    f.failure(dirs, "remove", path(f.dir("c")), NOT_FOUND, "not_found");
    assertTrue(f.request(dirs, "removeIfExists", path(f.dir("b"))).getBoolean("removed"));
    assertFalse(f.request(dirs, "removeIfExists", path(f.dir("b"))).getBoolean("removed"));

    // Bad input.
    f.failure(dirs, "open", new JsonObject(), BAD_REQUEST, "bad_request");
    f.failure(dirs, "open", new JsonObject().put("path", "a/b"), BAD_REQUEST, "bad_request");
    f.failure(dirs, "open", new JsonObject().put("path", new JsonArray().add("a").add(7)), BAD_REQUEST, "bad_request");
    f.failure(dirs, "create", new JsonObject().put("path", new JsonArray()), BAD_REQUEST, "bad_request");
    f.failure(dirs, "create", path(f.dir("x")).put("layer", 5), BAD_REQUEST, "bad_request");
  }

  @Test
  void allocatorActions() {
    Set<Long> values = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      JsonObject r = f.request(alloc, "allocate", new JsonObject().put("name", "ids"));
      assertEquals("ids", r.getString("name"));
      assertTrue(values.add(r.getLong("value")), "allocated twice: " + r);
    }
    String prefix = f.request(alloc, "allocatePrefix", new JsonObject().put("name", "ids")).getString("prefix");
    assertTrue(prefix.matches("([0-9a-f]{2})+"), prefix);
    f.failure(alloc, "allocate", new JsonObject(), BAD_REQUEST, "bad_request");
    f.failure(alloc, "allocate", new JsonObject().put("name", ""), BAD_REQUEST, "bad_request");
    f.failure(alloc, "allocate", new JsonObject().put("name", 3), BAD_REQUEST, "bad_request");
    f.failure(alloc, "allocate", new JsonObject().put("name", "x".repeat(300)), BAD_REQUEST, "bad_request");
  }

  @Test
  void internerActions() {
    JsonObject r = f.request(interner, "intern", new JsonObject().put("namespace", "uris")
        .put("strings", new JsonArray().add("a").add("b").add("a")));
    JsonArray ids = r.getJsonArray("ids");
    assertEquals(3, ids.size());
    assertEquals(ids.getString(0), ids.getString(2));
    assertNotEquals(ids.getString(0), ids.getString(1));

    JsonObject lookup = f.request(interner, "lookup", new JsonObject().put("namespace", "uris")
        .put("ids", new JsonArray().add(ids.getString(1)).add(ids.getString(0))));
    assertEquals(new JsonArray().add("b").add("a"), lookup.getJsonArray("strings"));
    JsonObject resolve = f.request(interner, "resolve", new JsonObject().put("namespace", "uris")
        .put("strings", new JsonArray().add("a").add("zzz")));
    assertEquals(ids.getString(0), resolve.getJsonArray("ids").getString(0));
    assertNull(resolve.getJsonArray("ids").getValue(1));
    assertTrue(f.request(interner, "listNamespaces", new JsonObject()).getJsonArray("namespaces").contains("uris"));

    f.failure(interner, "lookup", new JsonObject().put("namespace", "nope").put("ids", new JsonArray().add("1")),
        NOT_FOUND, "not_found");
    f.failure(interner, "resolve", new JsonObject().put("namespace", "nope").put("strings", new JsonArray()),
        NOT_FOUND, "not_found");
    f.failure(interner, "intern", new JsonObject().put("namespace", "uris"), BAD_REQUEST, "bad_request");
    f.failure(interner, "intern", new JsonObject().put("namespace", "uris").put("strings", "a"),
        BAD_REQUEST, "bad_request");
    f.failure(interner, "intern", new JsonObject().put("namespace", "uris").put("strings", new JsonArray().add(1)),
        BAD_REQUEST, "bad_request");
    JsonArray tooMany = new JsonArray();
    for (int i = 0; i < 201; i++) {
      tooMany.add("s" + i);
    }
    f.failure(interner, "intern", new JsonObject().put("namespace", "uris").put("strings", tooMany),
        BAD_REQUEST, "bad_request");
    f.failure(interner, "intern", new JsonObject().put("namespace", "uris")
        .put("strings", new JsonArray().add("x".repeat(20_000))), BAD_REQUEST, "bad_request");
    f.failure(interner, "lookup", new JsonObject().put("namespace", "uris").put("ids", new JsonArray().add("-5")),
        BAD_REQUEST, "bad_request");
    f.failure(interner, "lookup", new JsonObject().put("namespace", "uris").put("ids", new JsonArray().add(true)),
        BAD_REQUEST, "bad_request");

    assertTrue(f.request(interner, "removeNamespace", new JsonObject().put("namespace", "uris")).getBoolean("removed"));
    assertFalse(f.request(interner, "removeNamespace", new JsonObject().put("namespace", "uris")).getBoolean("removed"));
  }

  @Test
  void mutexActions() {
    JsonObject m = new JsonObject().put("name", "jobs");
    JsonObject a = f.request(mutex, "tryAcquire", m.copy().put("owner", "a"));
    assertTrue(a.getBoolean("held"));
    String tokenA = a.getString("token");
    assertEquals(20, tokenA.length());
    JsonObject b = f.request(mutex, "tryAcquire", m.copy().put("owner", "b"));
    assertFalse(b.getBoolean("held"));
    assertEquals(1, b.getInteger("position"));

    JsonObject state = f.request(mutex, "state", m);
    assertEquals("a", state.getJsonObject("owner").getString("owner"));
    assertEquals("b", state.getJsonArray("queue").getJsonObject(0).getString("owner"));

    assertEquals(new JsonArray().add("jobs"), f.request(mutex, "held", new JsonObject()).getJsonArray("names"));
    assertEquals(List.of("jobs"), await(f.client.heldMutexes(null, 10)));
    f.failure(mutex, "held", new JsonObject().put("limit", 0), BAD_REQUEST, "bad_request");
    JsonObject hb = f.request(mutex, "heartbeat", m.copy().put("owner", "a").put("token", tokenA));
    assertEquals(1L, hb.getLong("heartbeats"));
    // A waiter's heartbeat (no token) keeps its queue entry alive; someone who neither waits nor holds is refused.
    JsonObject waiterBeat = f.request(mutex, "heartbeat", m.copy().put("owner", "b"));
    assertEquals(false, waiterBeat.getBoolean("held"));
    assertEquals(1, waiterBeat.getInteger("position"));
    f.failure(mutex, "heartbeat", m.copy().put("owner", "b").put("token", tokenA), CONFLICT, "not_owner");
    f.failure(mutex, "heartbeat", m.copy().put("owner", "nobody"), CONFLICT, "not_owner");
    f.failure(mutex, "release", m.copy().put("owner", "b"), CONFLICT, "not_owner");
    f.failure(mutex, "acquire", m.copy().put("owner", "c").put("timeoutMs", 200), CONFLICT, "timed_out");
    assertEquals(1, f.request(mutex, "state", m).getJsonArray("queue").size(), "c left the queue after its timeout");

    JsonObject released = f.request(mutex, "release", m.copy().put("owner", "a").put("token", tokenA));
    assertEquals("HANDED_OFF", released.getString("type"));
    assertEquals("b", released.getString("owner"));
    assertTrue(released.getString("token").compareTo(tokenA) > 0, "fencing tokens grow");

    // Acquire waits for the hand-off.
    var waiting = f.client.request(mutex, "acquire", m.copy().put("owner", "c").put("timeoutMs", 10_000));
    f.request(mutex, "release", m.copy().put("owner", "b"));
    JsonObject c = await(waiting);
    assertTrue(c.getBoolean("held"));
    assertEquals("c", f.request(mutex, "state", m).getJsonObject("owner").getString("owner"));

    JsonObject d = f.request(mutex, "tryAcquire", m.copy().put("owner", "d"));
    assertFalse(d.getBoolean("held"));
    assertTrue(f.request(mutex, "leave", m.copy().put("owner", "d")).getBoolean("left"));
    assertFalse(f.request(mutex, "leave", m.copy().put("owner", "d")).getBoolean("left"));
    assertEquals("RELEASED", f.request(mutex, "release", m.copy().put("owner", "c")).getString("type"));
    f.failure(mutex, "release", m.copy().put("owner", "c"), CONFLICT, "not_held");
    f.failure(mutex, "heartbeat", m.copy().put("owner", "c"), CONFLICT, "not_held");

    JsonObject watch = f.request(mutex, "watch", m);
    assertEquals("fdb.mutex.events.jobs", watch.getString("address"));

    f.failure(mutex, "tryAcquire", new JsonObject().put("name", "jobs"), BAD_REQUEST, "bad_request");
    f.failure(mutex, "tryAcquire", new JsonObject().put("owner", "a"), BAD_REQUEST, "bad_request");
    f.failure(mutex, "tryAcquire", m.copy().put("owner", ""), BAD_REQUEST, "bad_request");
    f.failure(mutex, "release", m.copy().put("owner", "a").put("token", "xyz"), BAD_REQUEST, "bad_request");
    f.failure(mutex, "acquire", m.copy().put("owner", "a").put("timeoutMs", -1), BAD_REQUEST, "bad_request");
    f.failure(mutex, "acquire", m.copy().put("owner", "a").put("timeoutMs", "soon"), BAD_REQUEST, "bad_request");
  }

  private static int rawFailure(io.vertx.core.Future<?> f) {
    try {
      await(f);
      throw new AssertionError("the request was accepted");
    } catch (RuntimeException e) {
      Throwable t = e instanceof io.vertx.core.eventbus.ReplyException ? e : e.getCause();
      return ((io.vertx.core.eventbus.ReplyException) t).failureCode();
    }
  }

  @Test
  void unknownActionsAndBodies() {
    f.failure(mutex, "explode", new JsonObject(), NOT_FOUND, "unknown_action");
    assertEquals(BAD_REQUEST, rawFailure(f.vertx.eventBus().request(mutex, new JsonObject())),
        "no action header");
    assertEquals(BAD_REQUEST, rawFailure(f.vertx.eventBus().request(mutex, "not json",
        new io.vertx.core.eventbus.DeliveryOptions().addHeader("action", "state"))), "a string body");
  }
}
