package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;

import java.util.ArrayDeque;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One node's writes to one counter, served by as few transactions as they allow. One transaction
 * commits at a time; it takes every call that arrived before it started (and, on a retry, those
 * that arrived meanwhile), so calls pile up behind a commit and share the next one.
 *
 * <p>A batch that only adds is blind: an atomic ADD of its sum and an entry in the counter's log
 * ({@code root("cl", name, vstamp)}) under the transaction's versionstamp, no read, so batches of
 * different nodes never conflict on the one hot key (reading it with a conflict, two of three
 * nodes' attempts failed on FoundationDB). Its callers are answered after the commit from one
 * read at the commit version: the value then, less the log entries committed after the batch, is
 * the value right after it. The next batch starts as soon as the commit is acknowledged, not after
 * that read. A batch holding a compare-and-set (or adding nothing) reads the value with a
 * conflict, applies the calls, and writes the result with its log entry.
 *
 * <p>Within a batch the calls apply in their order of arrival, and batches commit in the order
 * they started, so each caller is answered as if the calls had run one after another in that order:
 * a legal order (all were in flight at once), so the counter stays linearizable, and a call made
 * without waiting for this node's earlier calls (a compare-and-set after increments) sees them.
 *
 * <p>A transaction that may have committed is never retried: with {@code commit_unknown_result}
 * (1021), {@code cluster_version_changed} (1039), a timeout or anything else not known to have left
 * the store untouched, every caller of the batch is failed with that error, and the whole batch
 * was applied or none of it was (one commit). The retry loop this replaces ({@code runAsync})
 * retried after 1021 and could apply an increment twice. A blind batch that committed but whose
 * read fails (at its commit version, then at a fresh one) fails its callers although it was
 * applied; the operation timeout bounds that read, and the log keeps entries far longer.
 *
 * <p>Every writer of the counter must log what it adds: a node of an earlier version (an ADD
 * without a log entry) mixed with these would make a blind batch's answer wrong by its additions.
 *
 * <p>{@link ClusterStore#counter} hands out one batcher per counter name; an idle batcher leaves
 * that map, so counters used once keep no memory. Two batchers of one name (a call racing the
 * retirement) are two writers of the counter, as two nodes are: still exact.
 */
final class CounterBatcher {
  private static final int TRIM_ONE_IN = 64;
  private static final Duration MIN_LOG_RETENTION = Duration.ofSeconds(60);

  /** What a call does to the value the calls before it left. */
  enum Kind {
    ADD_AND_GET, GET_AND_ADD, COMPARE_AND_SET
  }

  /** One caller's call; its answer is recomputed on every attempt, its result completed once. */
  static final class Call {
    final Kind kind;
    final long a;
    final long b;
    final CompletableFuture<Long> result = new CompletableFuture<>();
    long answer;

    Call(Kind kind, long a, long b) {
      this.kind = kind;
      this.a = a;
      this.b = b;
    }

    /** The value after this call, from {@code current}, the value before it. */
    long apply(long current) {
      switch (kind) {
        case ADD_AND_GET:
          answer = current + a;
          return answer;
        case GET_AND_ADD:
          answer = current;
          return current + a;
        default:
          boolean matches = current == a;
          answer = matches ? 1 : 0;
          return matches ? b : current;
      }
    }
  }

  private final ClusterStore store;
  private final String name;
  private final byte[] key;
  private final ArrayDeque<Call> waiting = new ArrayDeque<>();
  private boolean running;
  private boolean retired;

  CounterBatcher(ClusterStore store, String name) {
    this.store = store;
    this.name = name;
    this.key = store.schema().packCounterKey(name);
  }

  /**
   * Queues {@code call} behind the calls this node made before it; false when this batcher has
   * gone idle and left the store's map (the caller takes the name's current batcher instead).
   */
  boolean offer(Call call) {
    synchronized (this) {
      if (retired) {
        return false;
      }
      waiting.add(call);
      if (running) {
        return true;
      }
      running = true;
    }
    // Started on the store's executor, not here: calls the caller's event loop makes meanwhile
    // join this transaction (on the embedded engine, whose transactions complete before they
    // return, nothing would ever be batched otherwise).
    startOnExecutor();
    return true;
  }

  private void startOnExecutor() {
    try {
      store.executor().execute(this::startBatch);
    } catch (RuntimeException rejected) {
      failWaiting(rejected);
    }
  }

  private void startBatch() {
    long deadline = System.nanoTime() + store.operationTimeout().toNanos();
    Transaction tr;
    try {
      tr = newTransaction(deadline);
    } catch (RuntimeException e) {
      failWaiting(e);
      return;
    }
    attempt(tr, new ArrayList<>(), deadline);
  }

  private Transaction newTransaction(long deadline) {
    long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (remainingMs <= 0) {
      throw FdbErrors.error(FdbErrors.TRANSACTION_TIMED_OUT);
    }
    Transaction tr = store.database().createTransaction(store.executor());
    tr.options().setTimeout(remainingMs);
    return tr;
  }

  /** One attempt at the batch {@code calls}, grown by the calls that arrived since the last one. */
  private void attempt(Transaction tr, List<Call> calls, long deadline) {
    synchronized (this) {
      calls.addAll(waiting);
      waiting.clear();
    }
    store.counterAttempts.increment();
    long sum = 0;
    boolean compares = false;
    for (Call c : calls) {
      compares |= c.kind == Kind.COMPARE_AND_SET;
      sum += c.a;
    }
    try {
      if (compares || sum == 0) {
        readModifyWrite(tr, calls, deadline);
      } else {
        blindAdd(tr, calls, sum, deadline);
      }
    } catch (RuntimeException e) {
      retryOrFail(tr, calls, deadline, e);
    }
  }

  /**
   * A compare-and-set needs the value before it, and a batch that adds nothing writes nothing: the
   * value is read with a conflict, the calls applied to it, the result written with its log entry.
   */
  private void readModifyWrite(Transaction tr, List<Call> calls, long deadline) {
    tr.get(key).thenCompose(raw -> {
      long before = ClusterSchema.unpackCounterValue(raw);
      long value = before;
      for (Call c : calls) {
        value = c.apply(value);
      }
      if (value == before) {
        return commit(tr);
      }
      long delta = value - before;
      long after = value;
      return maybeTrim(tr).thenCompose(v -> {
        tr.set(key, ClusterSchema.packCounterValue(after));
        store.schema().appendCounterLog(tr, name, delta);
        return commit(tr);
      });
    }).whenComplete((v, e) -> {
      if (e == null) {
        tr.close();
        store.counterCommits.increment();
        calls.forEach(c -> c.result.complete(c.answer));
        next();
      } else {
        retryOrFail(tr, calls, deadline, FdbErrors.unwrap(e));
      }
    });
  }

  /**
   * Adds without reading, so this batch never conflicts with another node's: an atomic ADD of the
   * batch's sum and a log entry of it under the transaction's versionstamp. The next batch may
   * start once this one has committed (their versionstamps keep the calls in order); the callers
   * are answered by {@link #answerFromLog}.
   */
  private void blindAdd(Transaction tr, List<Call> calls, long sum, long deadline) {
    CompletableFuture<byte[]> stamp = tr.getVersionstamp();
    maybeTrim(tr).thenCompose(v -> {
      tr.mutate(MutationType.ADD, key, ClusterSchema.packCounterValue(sum));
      store.schema().appendCounterLog(tr, name, sum);
      return commit(tr);
    }).whenComplete((v, e) -> {
      if (e != null) {
        retryOrFail(tr, calls, deadline, FdbErrors.unwrap(e));
        return;
      }
      long version;
      try {
        version = tr.getCommittedVersion();
      } catch (RuntimeException unexpected) {
        tr.close();
        failCalls(calls, unexpected);
        next();
        return;
      }
      store.counterCommits.increment();
      next();
      stamp.whenComplete((s, se) -> {
        tr.close();
        if (se != null) {
          failCalls(calls, FdbErrors.unwrap(se));
        } else {
          answerFromLog(calls, sum, s, version);
        }
      });
    });
  }

  /**
   * The value after this batch is the value at any later version less what the log says was added
   * after the batch; read at the batch's own commit version first (no new read version needed),
   * at a fresh one when that fails (a version too old by now, say). The batch's own log entry must
   * still be there: the log is trimmed from its start, so then every later entry is there too.
   */
  private void answerFromLog(List<Call> calls, long sum, byte[] stamp, long version) {
    byte[] ownKey = store.schema().packCounterLogKey(name, stamp);
    Function<com.apple.foundationdb.ReadTransaction, CompletableFuture<Long>> after = rt ->
        rt.get(key).thenCombine(store.schema().readCounterLogFrom(rt, name, stamp), (raw, log) -> {
          if (log.isEmpty() || !Arrays.equals(log.get(0).getKey(), ownKey)) {
            throw new IllegalStateException("counter " + name + ": a batch committed at version " + version
                + " was answered only after its log entry had been trimmed; its increments were applied");
          }
          long later = 0;
          for (int i = 1; i < log.size(); i++) {
            later += ClusterSchema.unpackCounterValue(log.get(i).getValue());
          }
          return ClusterSchema.unpackCounterValue(raw) - later;
        });
    Transaction rt = store.database().createTransaction(store.executor());
    CompletableFuture<Long> atCommit;
    try {
      rt.options().setTimeout(store.operationTimeout().toMillis());
      rt.setReadVersion(version);
      atCommit = after.apply(rt);
    } catch (RuntimeException e) {
      atCommit = CompletableFuture.failedFuture(e);
    }
    atCommit.handle((value, e) -> e == null ? CompletableFuture.completedFuture(value) : store.read(after::apply))
        .thenCompose(f -> f)
        .whenComplete((value, e) -> {
          rt.close();
          if (e != null) {
            failCalls(calls, FdbErrors.unwrap(e));
            return;
          }
          long current = value - sum;
          for (Call c : calls) {
            current = c.apply(current);
          }
          calls.forEach(c -> c.result.complete(c.answer));
        });
  }

  private CompletableFuture<Void> commit(Transaction tr) {
    Function<Transaction, CompletableFuture<Void>> hook = store.counterBeforeCommit;
    return hook == null ? tr.commit() : hook.apply(tr).thenCompose(v -> tr.commit());
  }

  /**
   * Called before the batch's own ADD and log entry are written: a range cleared after a versionstamped key removes
   * it when the range covers the key as stamped (FoundationDB applies a transaction's mutations in order; the
   * embedded engine too, docs/embedded-conformance.md), so a trim issued after the entry could take it.
   *
   * <p>Now and then (a batch in {@link #TRIM_ONE_IN}, so that no counter keeps state for it) clears the
   * log entries older than {@link #logRetentionVersions}: far more than a batch takes from its commit
   * to reading the log, which the operation timeout bounds.
   */
  private CompletableFuture<Void> maybeTrim(Transaction tr) {
    if (ThreadLocalRandom.current().nextInt(TRIM_ONE_IN) != 0) {
      return CompletableFuture.completedFuture(null);
    }
    return tr.getReadVersion().thenAccept(v -> store.schema().trimCounterLog(tr, name, v - logRetentionVersions()));
  }

  private long logRetentionVersions() {
    long millis = Math.max(2 * store.operationTimeout().toMillis(), MIN_LOG_RETENTION.toMillis());
    return millis * ClusterSchema.VERSIONS_PER_MILLI;
  }

  private void retryOrFail(Transaction tr, List<Call> calls, long deadline, Throwable error) {
    int code = FdbErrors.codeOf(error);
    if (code == FdbErrors.NOT_COMMITTED) {
      // The conflicting transaction has committed (another node's batch, typically), so a retry at
      // a fresh read version goes through; onError's back-off (up to 10 ms on the first conflict)
      // would only leave the key idle while this node's callers pile up.
      tr.close();
      Transaction fresh;
      try {
        fresh = newTransaction(deadline);
      } catch (RuntimeException e) {
        fail(calls, e);
        return;
      }
      attempt(fresh, calls, deadline);
      return;
    }
    if (notCommitted(code)) {
      tr.onError(error).whenComplete((retry, e) -> {
        if (e == null) {
          attempt(retry, calls, deadline);
        } else {
          tr.close();
          fail(calls, FdbErrors.unwrap(e));
        }
      });
      return;
    }
    tr.close();
    fail(calls, error);
  }

  /** Whether {@code code} is a retryable error that guarantees the attempt did not commit. */
  private static boolean notCommitted(int code) {
    return FdbErrors.isRetryable(code) && code != FdbErrors.COMMIT_UNKNOWN_RESULT
        && code != FdbErrors.CLUSTER_VERSION_CHANGED;
  }

  private void fail(List<Call> calls, Throwable error) {
    failCalls(calls, error);
    next();
  }

  private static void failCalls(List<Call> calls, Throwable error) {
    calls.forEach(c -> c.result.completeExceptionally(error));
  }

  /** Starts the next batch when calls wait (on the executor: this may be the store's network thread), else goes idle. */
  private void next() {
    boolean idle;
    synchronized (this) {
      idle = waiting.isEmpty();
      running = !idle;
      retired = idle;
    }
    if (idle) {
      store.retire(name, this);
    } else {
      startOnExecutor();
    }
  }

  private void failWaiting(Throwable error) {
    List<Call> calls;
    synchronized (this) {
      calls = new ArrayList<>(waiting);
      waiting.clear();
    }
    fail(calls, error);
  }
}
