package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.concurrent.locks.LockSupport;

import static io.github.fdbcoord.conformance.Fixture.bytes;
import static io.github.fdbcoord.conformance.Fixture.filled;

/**
 * Every transaction method through every state a transaction can be in: live, written, cancelled,
 * committed, failed commit, deferred error, timed out, reset by onError. Each pair runs on a
 * transaction of its own, and its outcome is a short description that does not depend on the
 * engine ("value v", "error 1025", "throws 2017", "version"...), so the walks of two engines can be
 * compared. A future still incomplete at its deadline is the outcome "pending", which no pair may have.
 */
final class StateWalk {
  /** The deadline of each future: long enough for a loaded 2-core machine, short enough to report a hang. */
  static final long DEADLINE_SECONDS = 10;
  static final String PENDING = "pending";

  private final Database db;
  private final byte[] prefix;

  StateWalk(Database db, byte[] prefix) {
    this.db = db;
    this.prefix = prefix.clone();
  }

  byte[] key(String name) {
    return Fixture.concat(prefix, bytes(name));
  }

  Range range() {
    return Range.startsWith(prefix);
  }

  /** The states, by name: each brings a new transaction there and returns the transaction to use. */
  Map<String, Function<Transaction, Transaction>> states() {
    Map<String, Function<Transaction, Transaction>> s = new LinkedHashMap<>();
    s.put("live", tr -> tr);
    s.put("written", tr -> {
      tr.set(key("k"), bytes("w"));
      return tr;
    });
    s.put("cancelled", tr -> {
      tr.set(key("k"), bytes("w"));
      tr.cancel();
      return tr;
    });
    s.put("committed", tr -> {
      tr.set(key("c"), bytes("c"));
      tr.commit().join();
      return tr;
    });
    s.put("committed then cancelled", tr -> {
      tr.set(key("c"), bytes("c"));
      tr.commit().join();
      tr.cancel();
      return tr;
    });
    s.put("commit failed", tr -> {
      tr.get(key("k")).join();
      try (Transaction other = db.createTransaction()) {
        other.set(key("k"), bytes("o"));
        other.commit().join();
      }
      tr.set(key("x"), bytes("x"));
      expectCode(FdbErrors.NOT_COMMITTED, tr.commit());
      return tr;
    });
    s.put("deferred 2103", tr -> {
      tr.set(key("k"), filled(100_001, (byte) 'v'));
      return tr;
    });
    s.put("deferred 2011", tr -> {
      tr.setReadVersion(-1);
      return tr;
    });
    s.put("deferred 2103 then cancelled", tr -> {
      tr.set(key("k"), filled(100_001, (byte) 'v'));
      tr.cancel();
      return tr;
    });
    s.put("timed out", tr -> {
      tr.options().setTimeout(1);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
      while (codeOf(tr.getReadVersion()) != FdbErrors.TRANSACTION_TIMED_OUT) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("a 1 ms timeout did not fire within " + DEADLINE_SECONDS + " s");
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
      return tr;
    });
    s.put("reset", tr -> {
      tr.set(key("k"), bytes("w"));
      return tr.onError(new FDBException("not committed", FdbErrors.NOT_COMMITTED)).join();
    });
    return s;
  }

  /** The methods, by name: each calls one on the transaction and describes what it answers. */
  Map<String, Function<Transaction, CompletableFuture<String>>> methods() {
    Map<String, Function<Transaction, CompletableFuture<String>>> m = new LinkedHashMap<>();
    m.put("get", tr -> tr.get(key("k")).thenApply(this::value));
    m.put("snapshot get", tr -> tr.snapshot().get(key("k")).thenApply(this::value));
    m.put("getKey", tr -> tr.getKey(KeySelector.firstGreaterOrEqual(key("k"))).thenApply(this::value));
    m.put("getRange", tr -> tr.getRange(range()).asList().thenApply(this::rows));
    m.put("getRange iterator", tr -> tr.getRange(range(), 0, true).iterator().onHasNext().thenApply(b -> "hasNext " + b));
    m.put("getRange EXACT no limit", tr -> tr.getRange(range(), 0, false, StreamingMode.EXACT).asList()
        .thenApply(this::rows));
    m.put("getReadVersion", tr -> tr.getReadVersion().thenApply(v -> "version"));
    m.put("getEstimatedRangeSizeBytes", tr -> tr.getEstimatedRangeSizeBytes(range()).thenApply(v -> "size"));
    m.put("getRangeSplitPoints", tr -> tr.getRangeSplitPoints(range(), 1_000).thenApply(v -> "points"));
    m.put("watch", tr -> tr.watch(key("w")).thenApply(v -> "fired"));
    m.put("getVersionstamp", tr -> tr.getVersionstamp().thenApply(v -> "stamp"));
    m.put("getApproximateSize", tr -> tr.getApproximateSize().thenApply(v -> "size"));
    m.put("commit", tr -> tr.commit().thenApply(v -> "committed"));
    m.put("onError 1020", tr -> tr.onError(new FDBException("conflict", FdbErrors.NOT_COMMITTED)).thenApply(t -> "retry"));
    m.put("onError 2103", tr -> tr.onError(new FDBException("too large", FdbErrors.VALUE_TOO_LARGE))
        .thenApply(t -> "retry"));
    m.put("onError 0", tr -> tr.onError(new FDBException("success", 0)).thenApply(t -> "retry"));
    m.put("set", tr -> call(() -> tr.set(key("s"), bytes("s"))));
    m.put("clear range", tr -> call(() -> tr.clear(range())));
    m.put("mutate ADD", tr -> call(() -> tr.mutate(MutationType.ADD, key("n"), new byte[] {1})));
    m.put("addReadConflictKey", tr -> call(() -> tr.addReadConflictKey(key("r"))));
    m.put("setOption retry limit", tr -> call(() -> tr.options().setRetryLimit(3)));
    m.put("getCommittedVersion", tr -> {
      try {
        return CompletableFuture.completedFuture(tr.getCommittedVersion() > 0 ? "committed version" : "version -1");
      } catch (RuntimeException e) {
        return CompletableFuture.completedFuture("throws " + thrown(e));
      }
    });
    m.put("cancel", tr -> call(tr::cancel));
    return m;
  }

  /** Methods whose futures wait, by design, for the transaction's commit or end: the walk ends the transaction before their deadline. */
  static final List<String> WAIT_FOR_THE_END = List.of("watch", "getVersionstamp");

  /**
   * Every method through every state; the outcome of each pair by "state / method". Each pair's
   * transaction is closed afterwards.
   */
  Map<String, String> walk() {
    Map<String, String> outcomes = new LinkedHashMap<>();
    for (Map.Entry<String, Function<Transaction, Transaction>> state : states().entrySet()) {
      for (Map.Entry<String, Function<Transaction, CompletableFuture<String>>> method : methods().entrySet()) {
        outcomes.put(state.getKey() + " / " + method.getKey(), run(state.getValue(), method.getKey(), method.getValue()));
      }
    }
    return outcomes;
  }

  private String run(Function<Transaction, Transaction> state, String method,
      Function<Transaction, CompletableFuture<String>> call) {
    Transaction created = db.createTransaction();
    Transaction tr = null;
    try {
      tr = state.apply(created);
      CompletableFuture<String> answer;
      try {
        answer = call.apply(tr);
      } catch (RuntimeException e) {
        return "throws " + thrown(e);
      }
      if (WAIT_FOR_THE_END.contains(method) && !answer.isDone()) {
        tr.close();
      }
      return outcome(answer);
    } finally {
      if (tr != null) {
        tr.close();
      }
      created.close();
    }
  }

  static String outcome(CompletableFuture<String> f) {
    try {
      return f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      FDBException fdb = FdbErrors.fdbException(e.getCause());
      return fdb != null ? "error " + fdb.getCode() : "error " + e.getCause().getClass().getSimpleName();
    } catch (TimeoutException e) {
      return PENDING;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static CompletableFuture<String> call(Runnable r) {
    try {
      r.run();
      return CompletableFuture.completedFuture("ok");
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture("throws " + thrown(e));
    }
  }

  static String thrown(RuntimeException e) {
    FDBException fdb = FdbErrors.fdbException(e);
    return fdb != null ? String.valueOf(fdb.getCode()) : e.getClass().getSimpleName();
  }

  private static int codeOf(CompletableFuture<?> f) {
    try {
      f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      return 0;
    } catch (ExecutionException e) {
      return FdbErrors.codeOf(e.getCause());
    } catch (TimeoutException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void expectCode(int code, CompletableFuture<?> f) {
    int got = codeOf(f);
    if (got != code) {
      throw new AssertionError("expected FDB error " + code + " while preparing the state, got " + got);
    }
  }

  private String value(byte[] v) {
    if (v == null) {
      return "value null";
    }
    if (v.length >= prefix.length && Arrays.equals(Arrays.copyOf(v, prefix.length), prefix)) {
      return "key " + Fixture.string(Arrays.copyOfRange(v, prefix.length, v.length));
    }
    return v.length > 64 ? "value of " + v.length + " bytes" : "value " + FdbAssertions.hex(v);
  }

  private String rows(List<KeyValue> kvs) {
    StringBuilder sb = new StringBuilder("rows");
    for (KeyValue kv : kvs) {
      sb.append(' ').append(value(kv.getKey())).append('=').append(value(kv.getValue()));
    }
    return sb.toString();
  }
}
