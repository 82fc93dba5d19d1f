package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/** The grants of one {@link MutexService#acquireAll}, held and released together. */
final class MultiGrant implements MultiMutexHandle {
  private final FdbMutexService service;
  private final String owner;
  private final Map<String, MutexHandle> handles;
  private final CompletableFuture<MutexException> lost = new CompletableFuture<>();
  private final AtomicBoolean released = new AtomicBoolean();

  private MultiGrant(FdbMutexService service, String owner, Map<String, MutexHandle> handles) {
    this.service = service;
    this.owner = owner;
    this.handles = Collections.unmodifiableMap(handles);
    handles.values().forEach(h -> h.lost().thenAccept(lost::complete));
  }

  /**
   * Completes with every grant once all of {@code grants} (one per name of {@code names}) are held; fails with the
   * first failure, after giving back what was granted and leaving the other queues.
   */
  static CompletableFuture<MultiMutexHandle> allOrNone(FdbMutexService service, String owner, List<String> names,
      List<CompletableFuture<MutexHandle>> grants) {
    CompletableFuture<MultiMutexHandle> result = new CompletableFuture<>();
    AtomicBoolean failed = new AtomicBoolean();
    for (CompletableFuture<MutexHandle> grant : grants) {
      grant.whenComplete((h, e) -> {
        if (e != null && failed.compareAndSet(false, true)) {
          giveBack(grants);
          result.completeExceptionally(FdbErrors.unwrap(e));
        }
      });
    }
    CompletableFuture.allOf(grants.toArray(new CompletableFuture<?>[0])).thenRun(() -> {
      Map<String, MutexHandle> held = new LinkedHashMap<>();
      for (int i = 0; i < names.size(); i++) {
        held.put(names.get(i), grants.get(i).join());
      }
      if (!result.complete(new MultiGrant(service, owner, held))) {
        // Failed meanwhile (cannot be: a failure fails allOf), or cancelled by the caller: give the grants back.
        giveBack(grants);
      }
    });
    result.whenComplete((r, e) -> {
      if (result.isCancelled() && failed.compareAndSet(false, true)) {
        giveBack(grants);
      }
    });
    return result;
  }

  /** Releases the grants made and cancels the waits (a cancelled acquire leaves its queue, or releases a late grant). */
  private static void giveBack(List<CompletableFuture<MutexHandle>> grants) {
    for (CompletableFuture<MutexHandle> grant : grants) {
      if (!grant.cancel(false) && !grant.isCompletedExceptionally()) {
        grant.join().release();
      }
    }
  }

  @Override
  public String owner() {
    return owner;
  }

  @Override
  public Map<String, MutexHandle> handles() {
    return handles;
  }

  @Override
  public boolean isHeld() {
    return !released.get() && handles.values().stream().allMatch(MutexHandle::isHeld);
  }

  @Override
  public CompletableFuture<List<LockEvent>> release() {
    released.set(true);
    handles.values().forEach(h -> ((HeartbeatingHandle) h).markReleased());
    return service.transact(tr -> {
      List<CompletableFuture<AfterCommit<LockEvent>>> each = new ArrayList<>();
      for (MutexHandle h : handles.values()) {
        each.add(service.releaseIn(tr, h.name(), owner, h.token()));
      }
      return CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0]))
          .thenApply(v -> AfterCommit.all(each.stream().map(CompletableFuture::join).toList(), tr.getVersionstamp()));
    });
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr) {
    return FdbErrors.unwrapped(
        CompletableFuture.allOf(handles.values().stream().map(h -> h.fence(tr)).toArray(CompletableFuture<?>[]::new)));
  }

  @Override
  public CompletableFuture<MutexException> lost() {
    return lost;
  }

  @Override
  public String toString() {
    return "MultiMutexHandle(" + owner + ", " + handles.keySet() + ")";
  }
}
