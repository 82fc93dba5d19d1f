package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.subspace.Subspace;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Seed 000's windowed high-contention allocator.
 *
 * <p>Each allocation claims a slot in the current window with an atomic add (no conflict), reads
 * the window's count with a snapshot read (no conflict), and picks a random candidate in the
 * window; only the candidate's reservation key carries a read and a write conflict, so two
 * allocations conflict only when they pick the same candidate. Once a window is half claimed the
 * next allocation advances to the following window and clears the previous one.
 *
 * <p>Why a concurrent window advance cannot hand out a value twice (seed 000's argument): a
 * transaction that began before the advance committed reads a snapshot that still holds every
 * reservation of the old window, and the non-snapshot read of its candidate conflicts with any
 * concurrent reservation of the same candidate; a transaction that began after the advance sees
 * the new window, whose values the old window never contained. As in fdb-java, an allocation that
 * notices the window moved while it searched starts over in the new window. An allocation whose
 * snapshot predates a concurrent advance still commits its slot and reservation in the window that
 * advance cleared; they lie below every later window, so they never clash, and the next advance
 * clears them.
 *
 * <p>Unlike fdb-java's private allocator, nothing here takes a JVM-wide lock: allocations in
 * different transactions run fully concurrently, and the random source is per thread.
 */
public final class HighContentionAllocator extends TransactionalAllocator {
  public HighContentionAllocator(String name, Database database, Subspace subspace, Executor executor) {
    super(name, database, subspace, executor);
  }

  @Override
  public CompletableFuture<Long> allocateOnce(Transaction tr) {
    Search search = new Search(tr);
    return AsyncUtil.whileTrue(search::attempt, executor)
        .thenApply(done -> search.result);
  }

  /** The state of one allocation: the window it works in and, once found, its value. */
  private final class Search {
    private final Transaction tr;
    private long windowStart;
    private long windowSize;
    private long result = -1;

    Search(Transaction tr) {
      this.tr = tr;
    }

    /** Chooses a window and searches it; true when the window moved meanwhile and we go again. */
    CompletableFuture<Boolean> attempt() {
      return schema.latestWindowStart(tr.snapshot())
          .thenCompose(start -> chooseWindow(start, false))
          .thenCompose(chosen -> AsyncUtil.whileTrue(this::tryCandidate, executor))
          .thenApply(searched -> result < 0);
    }

    private CompletableFuture<Void> chooseWindow(long start, boolean advanced) {
      if (advanced) {
        schema.clearWindowsBefore(tr, start);
      }
      schema.incrementWindowCount(tr, start);
      return schema.windowCount(tr, start)
          .thenCompose(count -> useOrAdvance(start, count));
    }

    private CompletableFuture<Void> useOrAdvance(long start, long count) {
      long size = AllocatorSchema.windowSize(start);
      if (count * 2 < size) {
        windowStart = start;
        windowSize = size;
        return AsyncUtil.DONE;
      }
      return chooseWindow(start + size, true);
    }

    /** True to keep searching (candidate taken), false when found or when the window moved. */
    private CompletableFuture<Boolean> tryCandidate() {
      long candidate = windowStart + ThreadLocalRandom.current().nextLong(windowSize);
      CompletableFuture<Long> latestStart = schema.latestWindowStart(tr.snapshot());
      CompletableFuture<Boolean> taken = schema.isReserved(tr, candidate);
      return taken
          .thenCombine(latestStart, (isTaken, latest) -> decide(candidate, isTaken, latest));
    }

    private boolean decide(long candidate, boolean taken, long latestStart) {
      // Written whatever the outcome, as the seed does; the write conflict comes only if we keep it.
      schema.reserveWithoutConflict(tr, candidate);
      if (latestStart > windowStart) {
        return false;
      }
      if (taken) {
        return true;
      }
      schema.addReservationConflict(tr, candidate);
      result = candidate;
      return false;
    }
  }
}
