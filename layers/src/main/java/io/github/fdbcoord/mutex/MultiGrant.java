package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/** The grants of one {@link MutexService#acquireAll} (waited for by a {@link MultiAcquisition}), held and released together. */
final class MultiGrant implements MultiMutexHandle {
  private final FdbMutexService service;
  private final String owner;
  private final Map<String, MutexHandle> handles;
  private final CompletableFuture<MutexException> lost = new CompletableFuture<>();
  private final AtomicBoolean released = new AtomicBoolean();

  MultiGrant(FdbMutexService service, String owner, Map<String, MutexHandle> handles) {
    this.service = service;
    this.owner = owner;
    this.handles = Collections.unmodifiableMap(handles);
    handles.values().forEach(h -> h.lost().thenAccept(lost::complete));
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
    return releaseAll(service, owner, tokens());
  }

  /** Releases the grants {@code tokens} (by mutex name) of {@code owner} in one transaction: see {@link MutexService#releaseAll}. */
  static CompletableFuture<List<LockEvent>> releaseAll(FdbMutexService service, String owner,
      Map<String, FencingToken> tokens) {
    return service.transact(tr -> {
      List<CompletableFuture<AfterCommit<LockEvent>>> each = new ArrayList<>();
      tokens.forEach((name, token) -> each.add(service.releaseIn(tr, name, owner, token)));
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
