package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.concurrent.CompletableFuture;

/** The wait of a {@link SemaphoreService#awaitGrant} with a zero timeout: one transaction, never queued. */
final class TriedOnce implements SemaphoreWait {
  private final FdbSemaphoreService service;
  private final String name;
  private final String owner;
  private final CompletableFuture<FencingToken> attempt;
  private final CompletableFuture<FencingToken> granted = new CompletableFuture<>();

  TriedOnce(FdbSemaphoreService service, String name, String owner, CompletableFuture<FencingToken> attempt) {
    this.service = service;
    this.name = name;
    this.owner = owner;
    this.attempt = attempt;
    attempt.whenComplete((token, e) -> {
      if (e != null) {
        granted.completeExceptionally(FdbErrors.unwrap(e));
      } else if (!granted.complete(token)) {
        service.release(name, owner, token); // cancelled while the transaction ran: nobody will use the grant
      }
    });
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String owner() {
    return owner;
  }

  @Override
  public CompletableFuture<FencingToken> granted() {
    return granted;
  }

  @Override
  public CompletableFuture<Boolean> cancel() {
    boolean ended = granted.cancel(false);
    return attempt.handle((token, e) -> ended);
  }
}