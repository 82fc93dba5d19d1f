package io.github.fdbcoord.service.http;

import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * Reading an HTTP request's parts: its JSON body, query parameters and percent-encoded path
 * segments. Each reader answers 400 itself and returns null (or false) on bad input, so a route
 * stops there.
 */
final class HttpRequests {
  private HttpRequests() {}

  /** The request's JSON object (empty when there is no body), or null after answering 400. */
  static JsonObject body(RoutingContext ctx) {
    if (ctx.body() == null || ctx.body().isEmpty()) {
      return new JsonObject();
    }
    Object value;
    try {
      value = Json.decodeValue(ctx.body().buffer());
    } catch (DecodeException e) {
      error(ctx, 400, "bad_request", "the body is not valid JSON: " + abbreviate(String.valueOf(e.getMessage())));
      return null;
    }
    if (!(value instanceof JsonObject)) {
      error(ctx, 400, "bad_request", "the body must be a JSON object, got " + Requests.describe(value));
      return null;
    }
    return (JsonObject) value;
  }

  /** The optional boolean query parameter {@code name} (absent: false), or null after answering 400. */
  static Boolean booleanParam(RoutingContext ctx, String name) {
    String value = ctx.request().getParam(name);
    if (value == null || value.equals("false")) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    error(ctx, 400, "bad_request", "query parameter '" + name + "' must be true or false, got '"
        + abbreviate(value) + "'");
    return null;
  }

  /** Copies the optional integer query parameter 'limit' into {@code body}; false (400 sent) when it is not one. */
  static boolean putLimit(RoutingContext ctx, JsonObject body) {
    String limit = ctx.request().getParam("limit");
    if (limit != null) {
      try {
        body.put("limit", Integer.parseInt(limit));
      } catch (NumberFormatException e) {
        error(ctx, 400, "bad_request", "query parameter 'limit' must be an integer, got '" + abbreviate(limit) + "'");
        return false;
      }
    }
    return true;
  }

  /** The percent-decoding of {@code segment} ('+' is itself), refusing malformed escapes and invalid UTF-8. */
  static String strictDecode(String segment) {
    byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length);
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] != '%') {
        out.write(bytes[i]);
        continue;
      }
      int hi = i + 2 < bytes.length ? Character.digit(bytes[i + 1], 16) : -1;
      int lo = i + 2 < bytes.length ? Character.digit(bytes[i + 2], 16) : -1;
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("malformed escape at '" + abbreviate(segment.substring(i)) + "'");
      }
      out.write(hi * 16 + lo);
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("'" + abbreviate(segment) + "' is not UTF-8");
    }
  }
}
