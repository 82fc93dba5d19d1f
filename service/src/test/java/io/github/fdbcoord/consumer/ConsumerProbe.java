package io.github.fdbcoord.consumer;

import io.github.fdbcoord.service.CoordinationVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Started by {@link ConsumerPomIT} on the class path a consumer's build resolves from the installed
 * POM of the service (this class beside it): deploys {@link CoordinationVerticle} on the in-memory
 * embedded engine with HTTP on a free loopback port, as an application hosting the service would,
 * and asks {@code /health}. Prints the answer; exits 0 only if the service deployed and answered UP.
 */
public final class ConsumerProbe {
  private ConsumerProbe() {}

  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      CoordinationVerticle service = new CoordinationVerticle(new JsonObject()
          .put("http", new JsonObject().put("enabled", true).put("port", 0)));
      vertx.deployVerticle(service).await(60, TimeUnit.SECONDS);
      // The client is held until the answer is in: Vert.x closes the pool of a client that became
      // unreachable, and a collection during the request failed it with "Pool closed".
      HttpClient client = vertx.createHttpClient();
      Map.Entry<Integer, Buffer> health;
      try {
        // The body is asked for on the response's own context: asked later, from this thread, it may
        // have gone by already.
        health = client.request(HttpMethod.GET, service.httpPort(), "127.0.0.1", "/health")
            .compose(HttpClientRequest::send)
            .compose(response -> response.body().map(body -> Map.entry(response.statusCode(), body)))
            .await(30, TimeUnit.SECONDS);
      } finally {
        client.close().await(30, TimeUnit.SECONDS);
      }
      System.out.println("health: " + health.getKey() + " " + health.getValue());
      if (health.getKey() != 200 || !"UP".equals(health.getValue().toJsonObject().getString("status"))) {
        System.exit(1);
      }
    } finally {
      vertx.close().await(30, TimeUnit.SECONDS);
    }
  }
}
