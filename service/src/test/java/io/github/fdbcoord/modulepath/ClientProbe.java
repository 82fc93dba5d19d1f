package io.github.fdbcoord.modulepath;

import io.github.fdbcoord.client.CoordinationClient;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;

/**
 * Started by {@link ModulePathIT} with the client, api and vertx-core jars alone on the module path:
 * sends one request through {@link CoordinationClient} to a local consumer that echoes its action, and
 * prints the reply and the module the client came from.
 */
public final class ClientProbe {
  private ClientProbe() {}

  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      vertx.eventBus().<JsonObject>consumer("probe", m ->
          m.reply(m.body().copy().put("action", m.headers().get(CoordinationClient.ACTION_HEADER))));
      JsonObject reply = CoordinationClient.create(vertx)
          .request("probe", "echo", new JsonObject().put("n", 7))
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      System.out.println("client module: " + CoordinationClient.class.getModule().getName());
      System.out.println("reply: " + reply.encode());
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
