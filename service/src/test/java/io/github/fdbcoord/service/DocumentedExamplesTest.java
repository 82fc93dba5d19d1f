package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * What the docs show a user is what the service does: the HTTP exchanges docs/vertx.md prints (each
 * {@code curl} line and the answer under it) are sent to a service and answered with the same fields
 * of the same JSON types, and the configuration docs/real-foundationdb.md prints is the shipped
 * {@code conf/cluster-example.json}. Values may differ where they are the store's (ids, tokens).
 */
@ExtendWith(VertxExtension.class)
class DocumentedExamplesTest {
  private static final Pattern CURL = Pattern.compile(
      "^curl -s -X(\\w+) localhost:8080(\\S+) -H 'Content-Type: application/json' -d '(.*)'$");

  @Test
  void theHttpExamplesInTheDocsAreAnsweredWithTheFieldsTheyShow(Vertx vertx) throws IOException {
    List<String[]> exchanges = curlExchanges(Path.of("../docs/vertx.md"));
    assertFalse(exchanges.isEmpty(), "docs/vertx.md shows no curl exchange any more: this test checks nothing");
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      for (String[] exchange : exchanges) {
        Matcher curl = CURL.matcher(exchange[0]);
        curl.matches();
        JsonObject documented = new JsonObject(exchange[1]);
        HttpResponse<Buffer> answer = await(f.web().request(HttpMethod.valueOf(curl.group(1)), curl.group(2))
            .sendJsonObject(new JsonObject(curl.group(3))));
        assertEquals(200, answer.statusCode(), () -> exchange[0] + " answered " + answer.bodyAsString());
        assertEquals(shape(documented), shape(answer.bodyAsJsonObject()),
            () -> "the documented answer of " + exchange[0] + " has other fields than the service's: "
                + answer.bodyAsString());
      }
    }
  }

  @Test
  void theRealFoundationDbRecipesConfigurationIsTheShippedExample() throws IOException {
    String doc = Files.readString(Path.of("../docs/real-foundationdb.md"));
    Matcher json = Pattern.compile("```json\\n(.*?)\\n```", Pattern.DOTALL).matcher(doc);
    assertEquals(true, json.find(), "docs/real-foundationdb.md shows no JSON configuration any more");
    assertEquals(new JsonObject(Files.readString(Path.of("../conf/cluster-example.json"))),
        new JsonObject(json.group(1)), "the configuration printed in docs/real-foundationdb.md");
  }

  /** Each curl line of a code block whose next line is its JSON answer, as {curl, answer}. */
  private static List<String[]> curlExchanges(Path doc) throws IOException {
    List<String> lines = Files.readAllLines(doc);
    List<String[]> exchanges = new ArrayList<>();
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).startsWith("curl -s -X") && lines.get(i + 1).startsWith("{")) {
        assertEquals(true, CURL.matcher(lines.get(i)).matches(),
            "a curl example this test cannot read (extend its pattern): " + lines.get(i));
        exchanges.add(new String[] {lines.get(i), lines.get(i + 1)});
      }
    }
    return exchanges;
  }

  /** Field names and JSON value types, the part of an answer a client program relies on. */
  private static Map<String, String> shape(JsonObject object) {
    Map<String, String> shape = new TreeMap<>();
    object.forEach(e -> shape.put(e.getKey(), e.getValue() == null ? "null" : e.getValue().getClass().getSimpleName()));
    return shape;
  }
}
