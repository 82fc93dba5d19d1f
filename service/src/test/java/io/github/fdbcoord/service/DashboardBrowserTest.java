package io.github.fdbcoord.service;

import io.github.fdbcoord.api.LockEvent;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.logging.LogEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard in a real browser: Debian's {@code chromium} driven by its {@code chromedriver}
 * (both named by path, so Selenium Manager never runs and nothing is downloaded): every view, the
 * token, paging, and a store that is gone. Each test starts its own service; screenshots of the
 * views go to {@code target/screenshots/}.
 */
@Tag("slow")
class DashboardBrowserTest extends DashboardBrowserSupport {
  // ---------------------------------------------------------------- tests

  @Test
  void pageLoadsWithoutConsoleErrorsAndShowsEveryView(Vertx vertx) throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    // Long leases: the scene must stay put while the screenshots are taken.
    config.getJsonObject("mutex").put("leaseMs", 60_000).put("heartbeatIntervalMs", 5_000).put("reaperIntervalMs", 100);
    f = ServiceFixture.start(vertx, config, null);
    post("/mutexes/orders/acquire", new JsonObject().put("owner", "worker-1"));
    post("/mutexes/orders/acquire", new JsonObject().put("owner", "worker-2").put("wait", false));
    post("/mutexes/orders/acquire", new JsonObject().put("owner", "worker-3").put("wait", false));
    post("/mutexes/reports/acquire", new JsonObject().put("owner", "batch-7"));
    post("/mutexes/invoices/acquire", new JsonObject().put("owner", "billing-2"));
    post("/interners/uris/intern", new JsonObject().put("strings", new JsonArray().add("at://a").add("at://b").add("at://c")));
    post("/interners/tags/intern", new JsonObject().put("strings", new JsonArray().add("red").add("blue")));

    driver.get(base() + "/");
    assertEquals(base() + "/dashboard/", driver.getCurrentUrl(), "GET / redirects to the dashboard");
    waitFor("the live event connection", () -> text("#connection").contains("connected"));
    waitFor("the held mutexes", () -> rows("#held-table").size() == 3);

    // A watched mutex with a timeline: a hand-off made now appears on the page.
    watch("orders");
    JsonObject release = post("/mutexes/orders/release", new JsonObject().put("owner", "worker-1"));
    waitFor("the hand-off in the timeline", () -> timeline("orders").size() == 1);
    assertEquals(release.getString("token"), timelineEvents("orders").get(0).get("token"));
    waitFor("the new holder", () -> "worker-2".equals(text(".card[data-mutex='orders'] .holder")));
    clearSearch();
    waitFor("every held mutex again", () -> rows("#held-table").size() == 3);
    screenshot("mutexes");

    show("cluster");
    waitFor("this node", () -> rows("#nodes-table").size() == 1 && text("#nodes-table tbody").contains("UP"));
    assertTrue(text("#cluster-summary").contains("not clustered"), text("#cluster-summary"));
    // The node by what a person maps it to: its name (no nodeName configured: host:pid) and host.
    String host = java.net.InetAddress.getLocalHost().getHostName();
    waitFor("this node's name and host", () -> text("#nodes-table .node-name").equals(host + ":" + ProcessHandle.current().pid())
        && text("#nodes-table .node-host").equals(host));
    screenshot("cluster");

    show("health");
    // A little traffic, so that the charts have something to show (samples every 2 s).
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 20; j++) {
        await(f.web().get("/mutexes/orders").send());
      }
      // Two hand-offs of a mutex the page watches: lock events to count.
      post("/mutexes/invoices/acquire", new JsonObject().put("owner", "billing-3").put("wait", false));
      post("/mutexes/invoices/release", new JsonObject().put("owner", "billing-2"));
      post("/mutexes/invoices/acquire", new JsonObject().put("owner", "billing-2").put("wait", false));
      post("/mutexes/invoices/release", new JsonObject().put("owner", "billing-3"));
      Thread.sleep(2100);
    }
    waitFor("the charts", () -> driver.findElements(By.cssSelector("#charts polyline")).size() >= 4
        && rows("#routes-table").size() > 3 && text("#health-status").contains("UP"));
    assertTrue(text("#routes-table tbody").contains("/mutexes/:name"));
    screenshot("health");

    show("interners");
    waitFor("the namespaces", () -> rows("#ns-table").size() == 2);
    assertEquals("3", text("#ns-table tr[data-namespace='uris'] td:nth-child(2)"), "strings in 'uris'");

    show("directories");
    waitFor("the root directories", () -> !driver.findElements(By.cssSelector("#dir-tree > li")).isEmpty());

    // A narrow window: nothing sticks out sideways (wide tables scroll inside their own box).
    driver.manage().window().setSize(new Dimension(420, 760));
    show("mutexes");
    waitFor("the held mutexes", () -> rows("#held-table").size() == 3);
    Number overflow = (Number) ((JavascriptExecutor) driver).executeScript(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;");
    assertTrue(overflow.intValue() <= 0, "the page is " + overflow + " px wider than a 420 px window");
    screenshot("mutexes-narrow");

    List<LogEntry> errors = consoleErrors();
    assertTrue(errors.isEmpty(), "console errors: " + errors);
  }

  @Test
  void acquireHandOffAndExpiryAppearWithinASecondInOrderWithTheirTokens(Vertx vertx) throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("token", "s3cret");
    f = ServiceFixture.start(vertx, config, null);
    driver.get(base() + "/");
    signIn("s3cret");
    waitFor("the live event connection", () -> text("#connection").contains("connected"));
    watch("jobs");

    Map<LockEvent.Type, Long> publishedAt = new ConcurrentHashMap<>();
    await(f.client.lockEvents("jobs", e -> publishedAt.putIfAbsent(e.type(), System.nanoTime())));

    JsonObject grant = post("/mutexes/jobs/acquire", new JsonObject().put("owner", "alice").put("timeoutMs", 1000));
    long acquiredAt = System.nanoTime();
    withinASecondOf(acquiredAt, "ACQUIRED on the page", () -> timeline("jobs").size() >= 1);

    JsonObject queued = post("/mutexes/jobs/acquire", new JsonObject().put("owner", "bob").put("wait", false));
    assertFalse(queued.getBoolean("held"));
    JsonObject handOff = post("/mutexes/jobs/release", new JsonObject().put("owner", "alice")
        .put("token", grant.getString("token")));
    long handedOffAt = System.nanoTime();
    assertEquals("HANDED_OFF", handOff.getString("type"));
    withinASecondOf(handedOffAt, "HANDED_OFF on the page", () -> timeline("jobs").size() >= 2);
    withinASecondOf(handedOffAt, "bob as holder on the page",
        () -> "bob".equals(text(".card[data-mutex='jobs'] .holder"))
            && handOff.getString("token").equals(text(".card[data-mutex='jobs'] .current-token")));

    // bob never heartbeats: the reaper hands the mutex on after the 1.5 s lease (nobody waits).
    waitFor("the expiry to be published", () -> publishedAt.containsKey(LockEvent.Type.EXPIRED));
    withinASecondOf(publishedAt.get(LockEvent.Type.EXPIRED), "EXPIRED on the page", () -> timeline("jobs").size() >= 3);

    List<Map<String, String>> events = timelineEvents("jobs");
    assertEquals(List.of("ACQUIRED", "HANDED_OFF", "EXPIRED"),
        events.stream().map(e -> e.get("event")).collect(Collectors.toList()));
    assertEquals(List.of(grant.getString("token"), handOff.getString("token"), ""),
        events.stream().map(e -> e.get("token")).collect(Collectors.toList()), "fencing tokens");
    assertEquals(List.of("alice", "bob", ""),
        events.stream().map(e -> e.get("owner")).collect(Collectors.toList()));
    assertEquals("bob", events.get(2).get("previousOwner"));
    assertTrue(events.get(0).get("text").contains(grant.getString("token")), "the token is shown, not only kept");
    assertTrue(events.get(1).get("text").contains(handOff.getString("token")), events.get(1).get("text"));
    waitFor("the page to show the mutex free", () -> text(".card[data-mutex='jobs'] .state").equals("FREE"));

    List<LogEntry> errors = consoleErrors().stream()
        .filter(e -> !(e.getMessage().contains("401") && e.getMessage().contains("Failed to load resource")))
        .collect(Collectors.toList());
    assertTrue(errors.isEmpty(), "console errors other than the first 401 that asks for the token: " + errors);
  }

  @Test
  void wrongTokenShowsTheLoginPrompt(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("token", "right-token");
    f = ServiceFixture.start(vertx, config, null);
    driver.get(base() + "/dashboard/#cluster");
    waitFor("the login prompt", () -> visible("#login"));
    assertTrue(text("#login-message").contains("requires a bearer token"), text("#login-message"));
    assertFalse(visible("#view-cluster"), "no view before signing in");

    signIn("wrong-token");
    waitFor("the login prompt again", () -> visible("#login") && text("#login-message").contains("refused"));
    assertFalse(visible("#view-cluster"));
    assertEquals(0, rows("#nodes-table").size(), "nothing was shown with the wrong token");

    signIn("right-token");
    waitFor("the cluster view", () -> visible("#view-cluster") && rows("#nodes-table").size() == 1);
    assertFalse(visible("#login"));
    assertEquals("right-token", ((JavascriptExecutor) driver).executeScript(
        "return sessionStorage.getItem('fdbcoord.token');"));
    waitFor("the live event connection with the token", () -> text("#connection").contains("connected"));

    // The token is kept for the session: a reload asks for nothing.
    driver.navigate().refresh();
    waitFor("the cluster view after a reload", () -> visible("#view-cluster") && rows("#nodes-table").size() == 1);
    assertFalse(visible("#login"));
  }

  @Test
  void directoryTreeAndInternerViewsPageThroughMoreThanOnePage(Vertx vertx) throws Exception {
    f = ServiceFixture.start(vertx);
    List<String> tree = f.dir("tree");
    post("/directories", new JsonObject().put("path", new JsonArray(tree)).put("layer", "catalog"));
    List<String> children = new ArrayList<>();
    for (int i = 0; i < 44; i++) {
      String name = String.format("d%02d", i);
      children.add(name);
      post("/directories", new JsonObject().put("path", new JsonArray(child(tree, name))).put("layer", i % 2 == 0 ? "docs" : null));
    }
    post("/directories", new JsonObject().put("path", new JsonArray(child(tree, "zz-partition"))).put("partition", true));
    children.add("zz-partition");
    post("/directories", new JsonObject().put("path", new JsonArray(child(child(tree, "zz-partition"), "inner"))));
    JsonObject d08 = get(dirUrl(child(tree, "d08")));

    List<String> namespaces = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      namespaces.add(String.format("ns%02d", i));
      post("/interners/" + namespaces.get(i) + "/intern", new JsonObject().put("strings", new JsonArray().add("x" + i)));
    }
    JsonArray strings = new JsonArray();
    for (int i = 0; i < 45; i++) {
      strings.add("word-" + i);
    }
    JsonArray ids = post("/interners/ns07/intern", new JsonObject().put("strings", strings)).getJsonArray("ids");

    // Directories: 45 children, 20 a page.
    driver.get(base() + "/dashboard/#directories");
    WebElement root = waitFor("the directory form", () -> driver.findElement(By.id("dir-root")));
    root.sendKeys(String.join("/", tree), Keys.ENTER);
    waitFor("the first page of children", () -> treeChildren().size() == 20);
    assertTrue(text("#dir-tree > li .dir-line").contains("layer catalog"),
        () -> String.valueOf(((JavascriptExecutor) driver).executeScript("return document.querySelector('#dir-tree').outerHTML.slice(0, 1500)")));
    driver.findElement(By.cssSelector("#dir-tree li.more button")).click();
    waitFor("the second page", () -> treeChildren().size() == 40);
    driver.findElement(By.cssSelector("#dir-tree li.more button")).click();
    waitFor("the last page", () -> treeChildren().size() == 45);
    assertTrue(driver.findElements(By.cssSelector("#dir-tree li.more")).isEmpty(), "no more pages");
    assertEquals(children, treeChildren().stream()
        .map(li -> li.findElement(By.cssSelector(".dir-name")).getText()).collect(Collectors.toList()));
    WebElement d08Line = treeChildren().get(8).findElement(By.cssSelector(".dir-line"));
    assertTrue(d08Line.getText().contains("0x" + d08.getString("prefix")) && d08Line.getText().contains("layer docs"),
        d08Line.getText());
    WebElement partition = treeChildren().get(44);
    assertTrue(partition.getText().contains("partition"), partition.getText());
    partition.findElement(By.cssSelector("button.toggle")).click();
    waitFor("the partition's child", () -> partition.getText().contains("inner"));
    driver.findElement(By.cssSelector("#dir-tree > li > ul > li:nth-child(1) button.toggle")).click();
    waitFor("an empty directory says so", () -> text("#dir-tree").contains("No subdirectory"));
    ((JavascriptExecutor) driver).executeScript("window.scrollTo(0, 0)");
    screenshot("directories");

    // Interners: 25 namespaces, 10 a page; 45 strings in ns07, 20 a page.
    show("interners");
    waitFor("the first page of namespaces", () -> rows("#ns-table").size() == 10
        && text("#ns-page").contains("page 1 of 3"));
    List<String> seen = new ArrayList<>(namespaceNames());
    driver.findElement(By.id("ns-next")).click();
    waitFor("the second page of namespaces", () -> text("#ns-page").contains("page 2 of 3") && rows("#ns-table").size() == 10);
    seen.addAll(namespaceNames());
    driver.findElement(By.id("ns-next")).click();
    waitFor("the last page of namespaces", () -> text("#ns-page").contains("page 3 of 3") && rows("#ns-table").size() == 5);
    seen.addAll(namespaceNames());
    assertEquals(namespaces, seen);
    assertFalse(driver.findElement(By.id("ns-next")).isEnabled());

    driver.findElement(By.id("ns-prev")).click();
    waitFor("the second page again", () -> text("#ns-page").contains("page 2 of 3"));
    driver.findElement(By.id("ns-prev")).click();
    waitFor("the first page again", () -> text("#ns-page").contains("page 1 of 3"));
    WebElement ns07 = driver.findElement(By.cssSelector("#ns-table tr[data-namespace='ns07']"));
    assertEquals("46", text("#ns-table tr[data-namespace='ns07'] td:nth-child(2)"), "strings in ns07");
    ns07.click();
    List<String> listed = new ArrayList<>();
    waitFor("the first page of strings", () -> rows("#str-table").size() == 20);
    listed.addAll(stringIds());
    driver.findElement(By.id("str-next")).click();
    waitFor("the second page of strings", () -> text("#str-page").contains("page 2") && rows("#str-table").size() == 20);
    listed.addAll(stringIds());
    driver.findElement(By.id("str-next")).click();
    waitFor("the last page of strings", () -> text("#str-page").contains("page 3") && rows("#str-table").size() == 6);
    listed.addAll(stringIds());
    assertEquals(46, listed.size());
    assertTrue(listed.containsAll(ids.getList()), "every id interned is listed once");
    assertEquals(46, listed.stream().distinct().count());

    WebElement lookup = driver.findElement(By.id("ns-lookup"));
    lookup.sendKeys(ids.getString(3), Keys.ENTER);
    waitFor("the string of an id", () -> text("#ns-lookup-result").contains("\"word-3\""));
    lookup.clear();
    lookup.sendKeys("word-44", Keys.ENTER);
    waitFor("the id of a string", () -> text("#ns-lookup-result").contains(ids.getString(44)));
    lookup.clear();
    lookup.sendKeys("42", Keys.ENTER);   // digits with sequence 0: not an id, and not an interned string
    waitFor("digits that are no id", () -> text("#ns-lookup-result").contains("42 is not an id")
        && text("#ns-lookup-result").contains("\"42\" is not interned"));
    lookup.clear();
    lookup.sendKeys("never-interned", Keys.ENTER);
    waitFor("an unknown string", () -> text("#ns-lookup-result").contains("not interned"));
    assertEquals(0, get("/interners/ns07/stats").getLong("strings") - 46, "looking up assigned nothing");
    driver.findElement(By.id("str-prev")).click();
    driver.findElement(By.id("str-prev")).click();
    waitFor("the first page of strings again", () -> text("#str-page").contains("page 1"));
    lookup.clear();
    lookup.sendKeys("word-3", Keys.ENTER);
    waitFor("the lookup", () -> text("#ns-lookup-result").contains("has id"));
    ((JavascriptExecutor) driver).executeScript("window.scrollTo(0, 0)");
    screenshot("interners");

    List<LogEntry> errors = consoleErrors();
    assertTrue(errors.isEmpty(), "console errors: " + errors);
  }

  @Test
  void aStoreThatIsGoneAndAServiceThatStopsAreShownNotHidden(Vertx vertx) {
    io.github.fdbcoord.embedded.EmbeddedDatabase db = io.github.fdbcoord.embedded.EmbeddedDatabase.inMemory();
    f = ServiceFixture.start(vertx, ServiceFixture.baseConfig(), db);
    driver.get(base() + "/dashboard/#cluster");
    waitFor("this node UP", () -> text("#nodes-table tbody").contains("UP"));
    waitFor("the live event connection", () -> text("#connection").contains("connected"));

    db.close();
    HttpResponse<Buffer> nodes = await(f.web().get("/nodes").send());
    assertEquals(200, nodes.statusCode(), "the node list still answers");
    assertEquals("DOWN", nodes.bodyAsJsonObject().getJsonArray("nodes").getJsonObject(0).getString("status"));
    waitFor("this node DOWN with the reason", () -> text("#nodes-table tbody").contains("DOWN")
        && text("#nodes-table tbody").contains("store refuses writes"));
    show("mutexes");
    waitFor("the store error on the mutex view", () -> visible("#view-mutexes .error")
        && text("#view-mutexes .error").contains("unavailable"));
    show("health");
    waitFor("the store DOWN on the health view", () -> text("#health-status").contains("Store DOWN"));

    await(vertx.undeploy(f.deploymentId));
    waitFor("the lost live connection", () -> text("#connection").contains("disconnected"));
  }
}
