package io.github.fdbcoord.service;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many clients at once, over the event bus and over HTTP, on a store with commit latency (so that
 * concurrent requests share transactions): the interner's invariants hold across all of them, and a
 * bad request among them fails alone.
 */
@ExtendWith(VertxExtension.class)
class ServicePathConcurrencyTest {
  private static final int CLIENTS = 40;
  private static final int CALLS = 8;
  private EmbeddedDatabase db;
  private ServiceFixture f;

  @BeforeEach
  void start(Vertx vertx) {
    db = EmbeddedDatabase.open(EmbeddedOptions.builder().latency(Duration.ofMillis(2)).build());
    f = ServiceFixture.start(vertx, ServiceFixture.baseConfig(), db);
  }

  @AfterEach
  void stop() {
    f.close();
    db.close();
  }

  @Test
  void concurrentClientsOverBothFacesAgreeAndABadRequestFailsAlone() {
    List<String> universe = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      universe.add("word-" + i);
    }
    Map<String, Map<Long, Boolean>> told = new ConcurrentHashMap<>();
    List<Future<?>> clients = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      boolean http = c % 2 == 0;
      Random random = new Random(c);
      Future<?> chain = Future.succeededFuture();
      for (int k = 0; k < CALLS; k++) {
        chain = chain.compose(x -> {
          List<String> batch = new ArrayList<>();
          for (int i = 0; i < 10; i++) {
            batch.add(universe.get(random.nextInt(universe.size())));
          }
          return intern(http, batch).map(ids -> {
            for (int i = 0; i < batch.size(); i++) {
              told.computeIfAbsent(batch.get(i), s -> new ConcurrentHashMap<>()).put(ids.get(i), true);
            }
            return null;
          });
        });
      }
      clients.add(chain);
    }
    // Bad requests among them: an unpaired surrogate over the event bus, an id that cannot be over HTTP.
    Future<List<Long>> badBus = f.client.intern("shared", List.of("fine", "bad \uD800"));
    Future<HttpResponse<Buffer>> badHttp = f.web().post("/interners/shared/lookup")
        .sendJsonObject(new JsonObject().put("ids", new JsonArray().add("not-an-id")));
    await(Future.join(clients));
    for (Future<?> c : clients) {
      assertTrue(c.succeeded(), () -> "a good request failed: " + c.cause());
    }
    Throwable bad = await(badBus.transform(ar -> Future.succeededFuture(ar.cause())));
    assertEquals(400, assertInstanceOf(ReplyException.class, bad).failureCode());
    assertEquals(400, await(badHttp).statusCode());

    Map<Long, String> owners = new HashMap<>();
    told.forEach((s, ids) -> {
      assertEquals(1, ids.size(), () -> s + " was told several ids: " + ids.keySet());
      String prior = owners.put(ids.keySet().iterator().next(), s);
      assertTrue(prior == null, () -> "one id told for " + prior + " and " + s);
    });
    // Nothing lost: every id told reads back as its string, through the store (a new handle's cache is empty).
    List<Long> ids = new ArrayList<>(owners.keySet());
    for (int from = 0; from < ids.size(); from += 100) {
      List<Long> page = ids.subList(from, Math.min(ids.size(), from + 100));
      List<Optional<String>> strings = await(f.client.lookup("shared", page));
      for (int i = 0; i < page.size(); i++) {
        assertEquals(Optional.of(owners.get(page.get(i))), strings.get(i));
      }
    }
  }

  private Future<List<Long>> intern(boolean http, List<String> strings) {
    if (!http) {
      return f.client.intern("shared", strings);
    }
    return f.web().post("/interners/shared/intern")
        .sendJsonObject(new JsonObject().put("strings", new JsonArray(new ArrayList<>(strings))))
        .compose(r -> r.statusCode() == 200 ? Future.succeededFuture(r.bodyAsJsonObject().getJsonArray("ids"))
            : Future.failedFuture("HTTP " + r.statusCode() + ": " + r.bodyAsString()))
        .map(a -> a.stream().map(id -> Long.parseUnsignedLong((String) id)).toList());
  }
}
