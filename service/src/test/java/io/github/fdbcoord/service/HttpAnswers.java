package io.github.fdbcoord.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

/** What the HTTP tests of the waiting layers (election, semaphore, read-write lock) check of an answer. */
final class HttpAnswers {
  private HttpAnswers() {}

  /** A 200 answer's body. */
  static JsonObject ok(HttpResponse<Buffer> r) {
    assertEquals(200, r.statusCode(), r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  /** A refusal with {@code status} and {@code error}, whose message says what was wrong (and is no stack trace). */
  static JsonObject refused(HttpResponse<Buffer> r, int status, String error) {
    assertEquals(status, r.statusCode(), r.bodyAsString());
    JsonObject body = r.bodyAsJsonObject();
    assertEquals(error, body.getString("error"), body.encode());
    String message = body.getString("message");
    assertTrue(message != null && !message.isEmpty(), body.encode());
    assertFalse(message.contains("\tat ") || message.contains("Exception"), () -> "a stack trace: " + body.encode());
    return body;
  }
}
