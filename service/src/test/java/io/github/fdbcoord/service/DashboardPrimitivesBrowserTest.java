package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The election, semaphore and read-write lock views: a watched name shows its current state, and changes appear as
 * the WebSocket pushes them (the views do not poll for them).
 */
@Tag("slow")
class DashboardPrimitivesBrowserTest extends DashboardBrowserSupport {

  private void watchIn(String view, String name) {
    show(view);
    WebElement search = driver.findElement(By.id(view + "-search"));
    search.clear();
    search.sendKeys(name, Keys.ENTER);
    waitFor("live state of " + name, () -> "true".equals(driver.findElement(
        By.cssSelector("#view-" + view + " .card[data-name='" + name + "']")).getAttribute("data-live")));
  }

  @SuppressWarnings("unchecked")
  private List<String> cells(String css) {
    return (List<String>) ((JavascriptExecutor) driver).executeScript(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent.trim());", css);
  }

  /**
   * Leases far longer than a test: nothing heartbeats the grants made over HTTP here, and a loaded machine must not
   * see them expire between two steps (the fixture's mutex lease, which elections use, is 1.5 s).
   */
  private static JsonObject longLeases() {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", 120_000).put("heartbeatIntervalMs", 10_000);
    JsonObject leased = new JsonObject().put("leaseMs", 120_000).put("heartbeatIntervalMs", 10_000);
    return config.put("semaphore", leased.copy()).put("rwlock", leased.copy());
  }

  @Test
  void aSemaphoresHoldersAndQueueAreShownAndFollowItsChanges(Vertx vertx) throws Exception {
    f = ServiceFixture.start(vertx, longLeases(), null);
    driver.get(base() + "/dashboard/#semaphores");
    waitFor("the live connection", () -> text("#connection").contains("connected"));
    JsonObject a = post("/semaphores/pool/acquire", new JsonObject().put("owner", "alpha").put("permits", 2));
    watchIn("semaphores", "pool");
    String card = "#view-semaphores .card[data-name='pool']";
    waitFor("alpha holding", () -> cells(card + " table.holders tbody tr td:first-child").equals(List.of("alpha")));
    assertEquals("2", text(card + " dd.permits"));
    assertEquals(List.of("alpha", a.getString("token")), cells(card + " table.holders tbody tr td"));

    JsonObject b = post("/semaphores/pool/acquire", new JsonObject().put("owner", "beta").put("permits", 2));
    waitFor("beta holding too", () -> cells(card + " table.holders tbody tr td:first-child")
        .equals(List.of("alpha", "beta")));
    assertTrue(text(card + " .state").contains("2 OF 2"), text(card + " .state"));
    var gamma = f.client.request(f.client.semaphoreAddress(), "acquire", new JsonObject().put("name", "pool")
        .put("owner", "gamma").put("permits", 2).put("timeoutMs", 20_000));
    waitFor("gamma queued", () -> cells(card + " ol.queue li").equals(List.of("gamma")));
    post("/semaphores/pool/release", new JsonObject().put("owner", "alpha").put("token", a.getString("token")));
    waitFor("gamma holding after alpha's release", () -> cells(card + " table.holders tbody tr td:first-child")
        .equals(List.of("beta", "gamma")) && cells(card + " ol.queue li").isEmpty());
    assertEquals(ServiceFixture.await(gamma).getString("token"),
        cells(card + " table.holders tbody tr[data-owner='gamma'] td").get(1));
    assertEquals(b.getString("token"), cells(card + " table.holders tbody tr[data-owner='beta'] td").get(1));
    screenshot("semaphore-view");
    assertTrue(consoleErrors().isEmpty(), () -> "console errors: " + consoleErrors());
  }

  @Test
  void anElectionsLeaderIsShownAndFollowsItsChanges(Vertx vertx) throws Exception {
    f = ServiceFixture.start(vertx, longLeases(), null);
    driver.get(base() + "/dashboard/#elections");
    waitFor("the live connection", () -> text("#connection").contains("connected"));
    watchIn("elections", "chief");
    String card = "#view-elections .card[data-name='chief']";
    waitFor("no leader yet", () -> text(card + " .state").equals("NO LEADER"));
    JsonObject a = post("/elections/chief/campaign", new JsonObject().put("candidate", "ann"));
    waitFor("ann leading", () -> text(card + " dd.leader").equals("ann"));
    assertEquals(a.getString("epoch"), text(card + " dd.epoch"));
    var bob = f.client.request(f.client.electionAddress(), "campaign", new JsonObject().put("election", "chief")
        .put("candidate", "bob").put("timeoutMs", 20_000));
    waitFor("bob queued", () -> cells(card + " ol.candidates li").equals(List.of("bob")));
    post("/elections/chief/resign", new JsonObject().put("candidate", "ann").put("epoch", a.getString("epoch")));
    waitFor("bob leading", () -> text(card + " dd.leader").equals("bob"));
    assertEquals(ServiceFixture.await(bob).getString("epoch"), text(card + " dd.epoch"));
    waitFor("nobody queued", () -> cells(card + " ol.candidates li").isEmpty());
    screenshot("election-view");

    // The read-write lock view, on the same page: a writer, then a reader after it.
    JsonObject w = post("/rwlocks/doc/acquire", new JsonObject().put("owner", "writer").put("mode", "write"));
    watchIn("rwlocks", "doc");
    String lock = "#view-rwlocks .card[data-name='doc']";
    waitFor("the writer", () -> text(lock + " .state").equals("WRITE"));
    var reader = f.client.request(f.client.readWriteLockAddress(), "acquire", new JsonObject().put("name", "doc")
        .put("owner", "reader").put("mode", "read").put("timeoutMs", 20_000));
    waitFor("the reader queued", () -> cells(lock + " ol.queue li").equals(List.of("reader (read)")));
    post("/rwlocks/doc/release", new JsonObject().put("owner", "writer").put("mode", "write")
        .put("token", w.getString("token")));
    ServiceFixture.await(reader);
    waitFor("the reader holding", () -> text(lock + " .state").equals("READ")
        && cells(lock + " table.holders tbody tr td:first-child").equals(List.of("reader")));
    screenshot("rwlock-view");
    assertTrue(consoleErrors().isEmpty(), () -> "console errors: " + consoleErrors());
  }
}
