package io.github.fdbcoord.service.eventbus;

import static io.github.fdbcoord.fdb.FdbErrors.unwrap;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.github.fdbcoord.embedded.CommitsHeldException;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.store.StoreUnavailableException;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.util.concurrent.RejectedExecutionException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * The failure codes of the event-bus contract. A failed request is answered with a
 * {@link ReplyException} (failure type RECIPIENT_FAILURE) whose {@code failureCode()} is one of the
 * four codes below (the HTTP status the same failure gets) and whose message is
 * {@code "<reason>: <what was wrong>"}, reason being a finer, stable word (see docs/vertx.md).
 */
public final class FailureCodes {
  /** The request is malformed: missing or mistyped field, invalid name, batch too large. Do not retry. */
  public static final int BAD_REQUEST = WireProtocol.BAD_REQUEST;
  /** The named thing (directory, interner namespace, unknown action) does not exist. */
  public static final int NOT_FOUND = WireProtocol.NOT_FOUND;
  /**
   * The request conflicts with the current state or ran out of time: directory already exists or
   * has another layer, mutex not held / held by another owner, acquire timed out, transaction
   * conflicts or timeout. Retrying later may succeed.
   */
  public static final int CONFLICT = WireProtocol.CONFLICT;
  /**
   * The store cannot be reached, failed or did not answer in time (reason {@code store_unavailable}),
   * or the service is shutting down.
   */
  public static final int UNAVAILABLE = WireProtocol.UNAVAILABLE;

  private static final Logger LOG = LoggerFactory.getLogger(FailureCodes.class);

  private FailureCodes() {}

  /** A failure with {@code code} and {@code reason}. */
  public static ReplyException failure(int code, String reason, String message) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, code, reason + ": " + message);
  }

  /** A {@link FailureKind#BAD_REQUEST} failure: the request itself is wrong. */
  public static ReplyException badRequest(String message) {
    return failure(FailureKind.BAD_REQUEST, message);
  }

  /**
   * The failure that means {@code kind}: the one place each meaning gets its code and reason word.
   * A switch expression, so that a kind added to the api without a mapping here does not compile.
   */
  public static ReplyException failure(FailureKind kind, String message) {
    return switch (kind) {
      case BAD_REQUEST -> failure(BAD_REQUEST, "bad_request", message);
      case NOT_FOUND -> failure(NOT_FOUND, "not_found", message);
      case ALREADY_EXISTS -> failure(CONFLICT, "already_exists", message);
      case LAYER_MISMATCH -> failure(CONFLICT, "layer_mismatch", message);
      case CONFLICT -> failure(CONFLICT, "conflict", message);
      case TIMED_OUT -> failure(CONFLICT, "timed_out", message);
      case EXHAUSTED -> failure(CONFLICT, "exhausted", message);
      case NOT_HELD -> failure(CONFLICT, "not_held", message);
      case NOT_OWNER -> failure(CONFLICT, "not_owner", message);
      case QUEUE_FULL -> failure(CONFLICT, "queue_full", message);
      case NOT_QUEUED -> failure(CONFLICT, "not_queued", message);
      case CLOSED -> failure(UNAVAILABLE, "closed", message);
      case UNAVAILABLE -> failure(UNAVAILABLE, "unavailable", message);
      case STORE_UNAVAILABLE -> failure(UNAVAILABLE, "store_unavailable", message);
    };
  }

  /** The reply failure for {@code t}, classified by the layers' failure kinds. */
  public static ReplyException of(Throwable t) {
    Throwable e = unwrap(t);
    if (e instanceof ReplyException) {
      return (ReplyException) e;
    }
    // A timeout because the store held the commit back (its disk is low on space), under whatever a
    // layer wrapped it in: the store is unavailable for writes, and the reason says why.
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof CommitsHeldException) {
        return failure(FailureKind.UNAVAILABLE, "store refuses writes: " + c.getMessage());
      }
    }
    // Damaged storage under whatever a layer wrapped it in: its own reason, so that clients and operators
    // tell it from a store that is merely out of reach.
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof FDBException f && f.getCode() == FdbErrors.FILE_CORRUPT) {
        return failure(UNAVAILABLE, "store_corrupt", "store error " + f.getCode() + ": " + f.getMessage());
      }
    }
    if (e instanceof CoordinationException) {
      return failure(((CoordinationException) e).failureKind(), e.getMessage());
    }
    if (e instanceof IllegalArgumentException) {
      return failure(FailureKind.BAD_REQUEST, String.valueOf(e.getMessage()));
    }
    int code = FdbErrors.codeOf(e);
    if (code >= 0) {
      return failure(storeFailureKind(code), "store error " + code + ": " + e.getMessage());
    }
    if (e instanceof VirtualMachineError) {
      reportFatal(e);
      return failure(FailureKind.UNAVAILABLE, e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    if (e instanceof StoreUnavailableException || e instanceof RejectedExecutionException) {
      return failure(FailureKind.UNAVAILABLE, String.valueOf(e.getMessage()));
    }
    // Unexpected: log the stack trace here, send only the message.
    LOG.warn("unexpected failure", e);
    return failure(FailureKind.UNAVAILABLE, e.getClass().getSimpleName() + ": " + e.getMessage());
  }

  /** What a store error that reached the service unwrapped by a layer means. */
  private static FailureKind storeFailureKind(int code) {
    if (code == FdbErrors.TRANSACTION_TIMED_OUT || code == FdbErrors.TIMED_OUT) {
      return FailureKind.TIMED_OUT;
    }
    if (FdbErrors.isRetryable(code)) {
      return FailureKind.CONFLICT;
    }
    if (code == FdbErrors.TRANSACTION_TOO_LARGE || code == FdbErrors.KEY_TOO_LARGE
        || code == FdbErrors.VALUE_TOO_LARGE) {
      return FailureKind.BAD_REQUEST;
    }
    return FailureKind.UNAVAILABLE;
  }

  /**
   * Hands an OutOfMemoryError (or another VirtualMachineError) caught on its way to a reply to the
   * JVM's default uncaught-exception handler, as if it had reached a thread's top: the stand-alone
   * main's handler halts the process (a service out of memory must not look alive); an embedding
   * application's handler decides for itself.
   */
  static void reportFatal(Throwable e) {
    Thread.UncaughtExceptionHandler handler = Thread.getDefaultUncaughtExceptionHandler();
    if (handler != null) {
      handler.uncaughtException(Thread.currentThread(), e);
    } else {
      LOG.error("fatal JVM error while serving a request; the process should be restarted", e);
    }
  }

  /** The reason word of a failure message ("bad_request", "not_owner", ...). */
  public static String reasonOf(ReplyException e) {
    String m = e.getMessage();
    int i = m == null ? -1 : m.indexOf(": ");
    if (i > 0 && m.substring(0, i).matches("[a-z_]+")) {
      return m.substring(0, i);
    }
    switch (e.failureType()) {
      case NO_HANDLERS: return "unavailable";
      case TIMEOUT: return "timed_out";
      default: return "unavailable";
    }
  }

  /** The explanation part of a failure message. */
  public static String detailOf(ReplyException e) {
    String m = e.getMessage() == null ? "" : e.getMessage();
    int i = m.indexOf(": ");
    return i > 0 && m.substring(0, i).matches("[a-z_]+") ? m.substring(i + 2) : m;
  }

  /** The contract's code for any reply failure (event-bus timeouts and missing handlers are UNAVAILABLE). */
  public static int codeOf(ReplyException e) {
    if (e.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      int c = e.failureCode();
      return c == BAD_REQUEST || c == NOT_FOUND || c == CONFLICT || c == UNAVAILABLE ? c : UNAVAILABLE;
    }
    return UNAVAILABLE;
  }
}
