package io.github.fdbcoord.service;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.stream.Collectors;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The dashboard in a real browser: Debian's {@code chromium} driven by its {@code chromedriver}
 * (both named by path, so Selenium Manager never runs and nothing is downloaded), one browser per
 * test class. Each test starts its own service ({@link #f}); screenshots go to {@code target/screenshots/}.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class DashboardBrowserSupport {
  static final String CHROMIUM = "/usr/bin/chromium";
  static final String CHROMEDRIVER = "/usr/bin/chromedriver";
  private static final Path SCREENSHOTS = Paths.get("target", "screenshots");
  private static final Path SELENIUM_CACHE = Paths.get(System.getProperty("user.home"), ".cache", "selenium");
  static final Duration WAIT = Duration.ofSeconds(30);

  /** Kept: Selenium warns that it has no DevTools bindings for this Chromium, which these tests do not use. */
  private static final java.util.logging.Logger DEVTOOLS_LOG = java.util.logging.Logger.getLogger("org.openqa.selenium.devtools");
  static ChromeDriver driver;
  private static boolean seleniumCacheExisted;
  /**
   * The browser's temporary files: Chromium leaves a directory for its singleton socket in its TMPDIR after it
   * quits, one per browser started, so its TMPDIR is this directory, removed once the browser is gone.
   */
  private static Path browserTemp;
  ServiceFixture f;

  @BeforeAll
  static void startBrowser() throws IOException {
    for (String exe : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(Paths.get(exe))) {
        fail(exe + " is missing: install Debian's chromium and chromium-driver packages (bash .ci/run does)");
      }
    }
    seleniumCacheExisted = Files.exists(SELENIUM_CACHE);
    DEVTOOLS_LOG.setLevel(Level.SEVERE);
    // Both paths explicit: Selenium only runs Selenium Manager (which downloads) for what it lacks.
    System.setProperty("webdriver.chrome.driver", CHROMEDRIVER);
    browserTemp = Files.createTempDirectory("fdbcoord-chromium-");
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort()
        .withEnvironment(Map.of("TMPDIR", browserTemp.toString())).build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
        "--window-size=1100,760", "--lang=en-US");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20)).scriptTimeout(Duration.ofSeconds(10));
    Files.createDirectories(SCREENSHOTS);
  }

  @AfterAll
  static void stopBrowser() throws IOException {
    if (driver != null) {
      driver.quit();
    }
    if (browserTemp != null) {
      try (var paths = Files.walk(browserTemp)) {
        for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(path);
        }
      }
    }
    assertEquals(seleniumCacheExisted, Files.exists(SELENIUM_CACHE),
        "Selenium Manager ran (it caches its downloads in " + SELENIUM_CACHE + ")");
  }

  @BeforeEach
  void clearBrowser() {
    driver.manage().window().setSize(new Dimension(1100, 760));
    driver.manage().logs().get(LogType.BROWSER); // drops what earlier tests left
  }

  @AfterEach
  void stopService() {
    // Leave the page before its service goes, or its polling logs errors into the next test.
    driver.get("about:blank");
    if (f != null) {
      f.close();
    }
  }

  // ---------------------------------------------------------------- helpers

  String base() {
    return "http://127.0.0.1:" + f.service.httpPort();
  }

  String token() {
    return f.service.coordinationConfig().httpToken();
  }

  JsonObject post(String uri, JsonObject body) {
    var req = f.web().post(uri);
    if (token() != null) {
      req.putHeader("Authorization", "Bearer " + token());
    }
    HttpResponse<Buffer> r = await(req.sendJsonObject(body));
    assertTrue(r.statusCode() / 100 == 2, () -> "POST " + uri + " " + body + " -> " + r.statusCode() + " " + r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  JsonObject get(String uri) {
    var req = f.web().get(uri);
    if (token() != null) {
      req.putHeader("Authorization", "Bearer " + token());
    }
    HttpResponse<Buffer> r = await(req.send());
    assertEquals(200, r.statusCode(), () -> "GET " + uri + " -> " + r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  static List<String> child(List<String> path, String name) {
    List<String> p = new ArrayList<>(path);
    p.add(name);
    return p;
  }

  static String dirUrl(List<String> path) {
    return "/directories/" + path.stream().map(s -> java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8)
        .replace("+", "%20")).collect(Collectors.joining("/"));
  }

  void signIn(String token) {
    WebElement input = waitFor("the token field", () -> visible("#login") ? driver.findElement(By.id("login-token")) : null);
    input.clear();
    input.sendKeys(token, Keys.ENTER);
  }

  void show(String view) {
    driver.findElement(By.cssSelector("nav a[data-view='" + view + "']")).click();
    waitFor("the " + view + " view", () -> visible("#view-" + view));
  }

  void watch(String mutex) {
    show("mutexes");
    WebElement search = driver.findElement(By.id("mutex-search"));
    search.clear();
    search.sendKeys(mutex, Keys.ENTER);
    waitFor("live events of " + mutex, () -> "true".equals(driver.findElement(
        By.cssSelector(".card[data-mutex='" + mutex + "']")).getAttribute("data-live")));
  }

  /** Empties the search box, which also filters the held list. */
  void clearSearch() {
    WebElement search = driver.findElement(By.id("mutex-search"));
    search.sendKeys(Keys.chord(Keys.CONTROL, "a"), Keys.BACK_SPACE);
  }

  List<WebElement> timeline(String mutex) {
    return driver.findElements(By.cssSelector(".card[data-mutex='" + mutex + "'] ol.timeline li[data-event]"));
  }

  /** The timeline's entries read in one go in the page (the list may be redrawn between two reads). */
  @SuppressWarnings("unchecked")
  List<Map<String, String>> timelineEvents(String mutex) {
    return (List<Map<String, String>>) ((JavascriptExecutor) driver).executeScript(
        "return [...document.querySelectorAll(arguments[0])].map(li => ({event: li.dataset.event, "
            + "owner: li.dataset.owner, token: li.dataset.token, previousOwner: li.dataset.previousOwner, "
            + "text: li.textContent}));",
        ".card[data-mutex='" + mutex + "'] ol.timeline li[data-event]");
  }

  List<WebElement> treeChildren() {
    return driver.findElements(By.cssSelector("#dir-tree > li > ul > li[data-path]"));
  }

  List<String> namespaceNames() {
    return rows("#ns-table").stream().map(r -> r.getAttribute("data-namespace")).collect(Collectors.toList());
  }

  List<String> stringIds() {
    return rows("#str-table").stream().map(r -> r.getAttribute("data-id")).collect(Collectors.toList());
  }

  List<WebElement> rows(String table) {
    return driver.findElements(By.cssSelector(table + " tbody tr"));
  }

  /** The rendered text of the first match, read in the page (no element handle to go stale). */
  String text(String css) {
    Object t = ((JavascriptExecutor) driver).executeScript(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText.trim() : '';", css);
    return String.valueOf(t);
  }

  boolean visible(String css) {
    List<WebElement> found = driver.findElements(By.cssSelector(css));
    return !found.isEmpty() && found.get(0).isDisplayed();
  }

  /** Waits (at most {@link #WAIT}) until {@code condition} gives a non-null, non-false value. */
  <T> T waitFor(String what, Supplier<T> condition) {
    try {
      return new WebDriverWait(driver, WAIT, Duration.ofMillis(20)).withMessage(what)
          .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
          .until(d -> condition.get());
    } catch (org.openqa.selenium.TimeoutException e) {
      throw new AssertionError("not within " + WAIT.toSeconds() + " s: " + what + "; console: " + consoleLog()
          + "; page: " + abbreviate(text("main").replace('\n', ' ')), e);
    }
  }

  /** {@code s}, cut to 200 characters: a failure message quotes the page without drowning in it. */
  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }

  /** Asserts that {@code condition} holds less than a second after {@code startNanos}. */
  void withinASecondOf(long startNanos, String what, Supplier<Boolean> condition) {
    long deadline = startNanos + TimeUnit.SECONDS.toNanos(1);
    while (!Boolean.TRUE.equals(condition.get())) {
      if (System.nanoTime() > deadline) {
        fail(what + ": not within a second; console: " + consoleLog());
      }
      sleep(10);
    }
    System.out.printf("%s after %d ms%n", what, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
  }

  private final List<LogEntry> log = new ArrayList<>();

  /** Everything the browser logged so far in this test (the browser hands each entry out once). */
  List<LogEntry> consoleLog() {
    log.addAll(driver.manage().logs().get(LogType.BROWSER).getAll());
    return log;
  }

  List<LogEntry> consoleErrors() {
    return consoleLog().stream().filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
        .collect(Collectors.toList());
  }

  void screenshot(String name) throws IOException {
    sleep(150); // let the last render settle
    byte[] png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES);
    Path out = SCREENSHOTS.resolve(name + ".png");
    Files.write(out, png);
    assertNotNull(png);
    assertTrue(png.length > 1000, "screenshot " + out);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
