package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncIterable;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A {@link Database} that counts what the code above it costs in the store: transaction attempts,
 * read versions (GRVs), reads, commits, and round trips, the waits that follow one another within a
 * transaction. A read issued while another read of the same transaction is still in flight shares
 * its round trip, as it does on the wire; the GRV before a transaction's first read or commit is a
 * round trip of its own, and so is every commit (also one without writes, which FoundationDB answers
 * without asking the cluster). Benchmarks and tests only: every call goes through reflection. On the
 * embedded engine give reads a latency (EmbeddedOptions.readLatency), or a read completes before the
 * next is issued and every read counts as a round trip of its own.
 */
public final class CountingDatabase {
  /** Totals since the database was wrapped; {@link #minus} gives what one span of work cost. */
  public record Counts(long attempts, long grvs, long reads, long commits, long roundTrips) {
    public Counts minus(Counts o) {
      return new Counts(attempts - o.attempts, grvs - o.grvs, reads - o.reads, commits - o.commits, roundTrips - o.roundTrips);
    }

    Counts plus(Counts o) {
      return new Counts(attempts + o.attempts, grvs + o.grvs, reads + o.reads, commits + o.commits, roundTrips + o.roundTrips);
    }

    String per(long operations) {
      double n = Math.max(1, operations);
      return String.format("%.2f transactions (%.2f commits), %.2f GRVs, %.2f reads, %.2f round trips",
          attempts / n, commits / n, grvs / n, reads / n, roundTrips / n);
    }
  }

  private final AtomicLong attempts = new AtomicLong();
  private final AtomicLong grvs = new AtomicLong();
  private final AtomicLong reads = new AtomicLong();
  private final AtomicLong commits = new AtomicLong();
  private final AtomicLong roundTrips = new AtomicLong();
  private final Database target;
  private final Database counted;

  public CountingDatabase(Database target) {
    this.target = target;
    this.counted = (Database) Proxy.newProxyInstance(Database.class.getClassLoader(),
        new Class<?>[] {Database.class}, this::onDatabase);
  }

  public Database database() {
    return counted;
  }

  public Counts counts() {
    return new Counts(attempts.get(), grvs.get(), reads.get(), commits.get(), roundTrips.get());
  }

  private Object onDatabase(Object proxy, Method m, Object[] args) throws Throwable {
    switch (m.getName()) {
      case "createTransaction":
        return count((Transaction) forward(target, m, args));
      case "runAsync":
      case "readAsync":
        if (args.length == 2 && args[1] instanceof Executor e) {
          @SuppressWarnings("unchecked")
          Function<Transaction, CompletableFuture<Object>> body = (Function<Transaction, CompletableFuture<Object>>) args[0];
          return loop(count(target.createTransaction(e)), body, m.getName().equals("runAsync"));
        }
        if (args.length == 1) {
          @SuppressWarnings("unchecked")
          Function<Transaction, CompletableFuture<Object>> body = (Function<Transaction, CompletableFuture<Object>>) args[0];
          return loop(count(target.createTransaction()), body, m.getName().equals("runAsync"));
        }
        return forward(target, m, args);
      case "run":
      case "read":
        if (args.length == 1 && args[0] instanceof Function<?, ?> f) {
          @SuppressWarnings("unchecked")
          Function<Transaction, Object> body = (Function<Transaction, Object>) f;
          return loop(count(target.createTransaction()), tr -> CompletableFuture.completedFuture(body.apply(tr)),
              m.getName().equals("run")).join();
        }
        return forward(target, m, args);
      default:
        return forward(target, m, args);
    }
  }

  /** The retry loop of fdb-java's {@code runAsync}, over counted attempts. */
  private CompletableFuture<Object> loop(Transaction tr, Function<Transaction, CompletableFuture<Object>> body, boolean commit) {
    CompletableFuture<Object> attempt;
    try {
      attempt = body.apply(tr).thenCompose(r -> commit ? tr.commit().thenApply(v -> r) : CompletableFuture.completedFuture(r));
    } catch (RuntimeException e) {
      attempt = CompletableFuture.failedFuture(e);
    }
    return attempt.handle((r, e) -> {
      if (e == null) {
        tr.close();
        return CompletableFuture.completedFuture(r);
      }
      Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
      return tr.onError(cause).thenCompose(next -> loop(next, body, commit));
    }).thenCompose(f -> f);
  }

  private Transaction count(Transaction tr) {
    attempts.incrementAndGet();
    return (Transaction) Proxy.newProxyInstance(Transaction.class.getClassLoader(),
        new Class<?>[] {Transaction.class}, new Counted(tr, new Attempt()));
  }

  /** One transaction attempt's state: whether it has its read version, and its reads in flight. */
  private final class Attempt {
    final AtomicBoolean hasReadVersion = new AtomicBoolean();
    final AtomicInteger inFlight = new AtomicInteger();

    void needsReadVersion() {
      if (hasReadVersion.compareAndSet(false, true)) {
        grvs.incrementAndGet();
        roundTrips.incrementAndGet();
      }
    }

    <T> CompletableFuture<T> read(CompletableFuture<T> f) {
      needsReadVersion();
      reads.incrementAndGet();
      if (inFlight.getAndIncrement() == 0) {
        roundTrips.incrementAndGet();
      }
      // A new future, completed after the count: the caller's callbacks on f would otherwise run
      // first (a future runs its dependents newest first) and a read they issue would look concurrent.
      CompletableFuture<T> out = new CompletableFuture<>();
      f.whenComplete((v, e) -> {
        inFlight.decrementAndGet();
        if (e == null) {
          out.complete(v);
        } else {
          out.completeExceptionally(e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e);
        }
      });
      return out;
    }
  }

  private final class Counted implements InvocationHandler {
    private final ReadTransaction tr;
    private final Attempt attempt;

    Counted(ReadTransaction tr, Attempt attempt) {
      this.tr = tr;
      this.attempt = attempt;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      switch (m.getName()) {
        case "get":
        case "getKey":
          return attempt.read((CompletableFuture<?>) forward(tr, m, args));
        case "getReadVersion":
          attempt.needsReadVersion();
          return forward(tr, m, args);
        case "getRange":
          if (m.getReturnType() == AsyncIterable.class) {
            return countedRange((AsyncIterable<?>) forward(tr, m, args));
          }
          return forward(tr, m, args);
        case "snapshot":
          ReadTransaction snapshot = (ReadTransaction) forward(tr, m, args);
          return Proxy.newProxyInstance(ReadTransaction.class.getClassLoader(),
              new Class<?>[] {ReadTransaction.class}, new Counted(snapshot, attempt));
        case "commit":
          attempt.needsReadVersion();
          commits.incrementAndGet();
          roundTrips.incrementAndGet();
          return forward(tr, m, args);
        case "onError":
          @SuppressWarnings("unchecked")
          CompletableFuture<Transaction> next = (CompletableFuture<Transaction>) forward(tr, m, args);
          return next.thenApply(CountingDatabase.this::count);
        default:
          return forward(tr, m, args);
      }
    }

    private AsyncIterable<?> countedRange(AsyncIterable<?> range) {
      return (AsyncIterable<?>) Proxy.newProxyInstance(AsyncIterable.class.getClassLoader(),
          new Class<?>[] {AsyncIterable.class}, (p, m, args) -> {
            if (m.getName().equals("asList") || m.getName().equals("iterator")) {
              if (m.getName().equals("asList")) {
                return attempt.read((CompletableFuture<?>) forward(range, m, args));
              }
              attempt.needsReadVersion();
              reads.incrementAndGet();
              roundTrips.incrementAndGet();
            }
            return forward(range, m, args);
          });
    }
  }

  private static Object forward(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
