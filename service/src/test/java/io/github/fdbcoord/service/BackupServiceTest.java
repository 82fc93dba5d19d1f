package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /admin/backup} on a service over the durable embedded store (only with the bearer token,
 * refused without one even on loopback; bad directories and stores without backups answered 4xx), and
 * the CLI's {@code restore} of what it wrote: a second service on the restored directory finds the
 * first one's interned strings under the same ids.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.api.Timeout(value = 90, unit = TimeUnit.SECONDS)
class BackupServiceTest {
  private static final String TOKEN = "backup-test-token";

  private static JsonObject config(String token) {
    JsonObject config = ServiceFixture.baseConfig();
    if (token != null) {
      config.getJsonObject("http").put("token", token);
    }
    return config;
  }

  private static HttpResponse<Buffer> backup(ServiceFixture f, String token, Object directory) {
    var request = f.web().post("/admin/backup");
    if (token != null) {
      request.bearerTokenAuthentication(token);
    }
    return await(request.sendJsonObject(new JsonObject().put("directory", directory)));
  }

  private static void assertRefused(HttpResponse<Buffer> response, int status, String reason, String says) {
    assertEquals(status, response.statusCode(), response.bodyAsString());
    JsonObject body = response.bodyAsJsonObject();
    assertEquals(reason, body.getString("error"), response.bodyAsString());
    assertTrue(body.getString("message").contains(says), body.getString("message"));
  }

  /** Runs the CLI's restore; its exit status and what it printed. */
  private static String[] cliRestore(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    String[] command = new String[args.length + 1];
    command[0] = "restore";
    System.arraycopy(args, 0, command, 1, args.length);
    int status = CoordinationMain.restore(command, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(status), out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  void aBackupTakenThroughTheServiceRestoresWithTheCliIntoAStoreThatServesTheSameData(Vertx vertx,
      @TempDir Path temp) throws Exception {
    Path data = temp.resolve("data");
    Path backup = temp.resolve("backup");
    JsonObject config = config(TOKEN);
    List<Long> ids;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      ServiceFixture f = ServiceFixture.start(vertx, config, db);
      try {
        ids = await(f.client.intern("names", List.of("alpha", "beta", "gamma")));

        assertRefused(backup(f, null, backup.toString()), 401, "unauthorized", "Authorization: Bearer");
        assertRefused(backup(f, "wrong", backup.toString()), 401, "unauthorized", "wrong");
        assertFalse(Files.exists(backup), "a refused request wrote nothing");

        assertRefused(backup(f, TOKEN, null), 400, "bad_request", "'directory' must be the absolute path");
        assertRefused(backup(f, TOKEN, 42), 400, "bad_request", "'directory' must be the absolute path");
        assertRefused(backup(f, TOKEN, "relative/dir"), 400, "bad_request", "must be an absolute path");
        assertRefused(backup(f, TOKEN, data.resolve("inside").toString()), 400, "bad_request",
            "is inside the data directory");
        Path notEmpty = Files.createDirectories(temp.resolve("not-empty"));
        Files.writeString(notEmpty.resolve("file"), "x");
        assertRefused(backup(f, TOKEN, notEmpty.toString()), 400, "bad_request", "is not an empty directory");

        HttpResponse<Buffer> done = backup(f, TOKEN, backup.toString());
        assertEquals(200, done.statusCode(), done.bodyAsString());
        JsonObject info = done.bodyAsJsonObject();
        assertEquals(backup.toAbsolutePath().toString(), info.getString("directory"));
        assertTrue(info.getLong("version") > 0 && info.getLong("bytes") > 0 && info.getInteger("files") > 3,
            info.encode());
        assertTrue(Files.isRegularFile(backup.resolve("BACKUP")));
        // Written after the backup: not in it.
        await(f.client.intern("names", List.of("after the backup")));
      } finally {
        f.close();
      }
    }

    Path restored = temp.resolve("restored");
    String[] usage = cliRestore(backup.toString());
    assertEquals("2", usage[0], usage[2]);
    assertTrue(usage[2].contains("restore needs two arguments"), usage[2]);
    String[] ok = cliRestore(backup.toString(), restored.toString());
    assertEquals("0", ok[0], ok[2]);
    assertTrue(ok[1].contains("into " + restored.toAbsolutePath()), ok[1]);
    String[] again = cliRestore(backup.toString(), restored.toString());
    assertEquals("1", again[0]);
    assertTrue(again[2].contains("is not an empty directory"), again[2]);

    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(restored))) {
      ServiceFixture f = ServiceFixture.start(vertx, config, db);
      try {
        List<Long> resolved = await(f.client.resolve("names", List.of("alpha", "beta", "gamma", "after the backup")))
            .stream().map(v -> v.isPresent() ? v.getAsLong() : -1L).toList();
        assertEquals(ids, resolved.subList(0, 3), "the restored store has the interned strings under their ids");
        assertEquals(-1L, resolved.get(3), "a string interned after the backup is not in it");
      } finally {
        f.close();
      }
    }
  }

  @Test
  void theCliRefusesADamagedBackupNamingTheFile(@TempDir Path temp) throws Exception {
    Path backup = temp.resolve("backup");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(temp.resolve("data")))) {
      db.run(tr -> {
        tr.set("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
        return null;
      });
      db.backup(backup).get(60, TimeUnit.SECONDS);
    }
    Path segment;
    try (Stream<Path> s = Files.list(backup)) {
      segment = s.filter(p -> p.getFileName().toString().startsWith("log-")).findFirst().orElseThrow();
    }
    try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
      file.seek(file.length() - 1);
      int b = file.read();
      file.seek(file.length() - 1);
      file.write(b ^ 1);
    }
    String[] refused = cliRestore(backup.toString(), temp.resolve("restored").toString());
    assertEquals("1", refused[0]);
    assertTrue(refused[2].contains("is damaged: " + segment.getFileName()), refused[2]);
  }

  @Test
  void withoutATokenTheRouteIsRefusedEvenOnLoopbackAndAStoreInMemoryHasNoBackup(Vertx vertx, @TempDir Path temp) {
    try (ServiceFixture open = ServiceFixture.start(vertx, config(null), null)) {
      assertRefused(backup(open, null, temp.resolve("b").toString()), 403, "forbidden", "need a bearer token");
    }
    try (ServiceFixture memory = ServiceFixture.start(vertx, config(TOKEN), null)) {
      assertRefused(backup(memory, TOKEN, temp.resolve("b").toString()), 409, "conflict", "in memory");
    }
    assertFalse(Files.exists(temp.resolve("b")));
  }
}
