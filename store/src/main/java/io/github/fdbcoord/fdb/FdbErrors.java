package io.github.fdbcoord.fdb;

import com.apple.foundationdb.FDBException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * FoundationDB error codes and their classification, computed here rather than through
 * {@link FDBException#isRetryable()}, which calls into the native client library (see design.md, "Pitfall").
 * Codes and messages are those of FoundationDB's {@code flow/include/flow/error_definitions.h}.
 */
public final class FdbErrors {
  public static final int OPERATION_FAILED = 1000;
  public static final int TIMED_OUT = 1004;
  public static final int TRANSACTION_TOO_OLD = 1007;
  public static final int FUTURE_VERSION = 1009;
  public static final int NOT_COMMITTED = 1020;
  public static final int COMMIT_UNKNOWN_RESULT = 1021;
  public static final int TRANSACTION_CANCELLED = 1025;
  public static final int TRANSACTION_TIMED_OUT = 1031;
  public static final int TOO_MANY_WATCHES = 1032;
  public static final int WATCHES_DISABLED = 1034;
  public static final int ACCESSED_UNREADABLE = 1036;
  public static final int PROCESS_BEHIND = 1037;
  public static final int DATABASE_LOCKED = 1038;
  public static final int CLUSTER_VERSION_CHANGED = 1039;
  public static final int COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED = 1042;
  public static final int BATCH_TRANSACTION_THROTTLED = 1051;
  public static final int GRV_PROXY_MEMORY_LIMIT_EXCEEDED = 1078;
  public static final int TAG_THROTTLED = 1213;
  public static final int TRANSACTION_REJECTED_RANGE_LOCKED = 1231;
  public static final int OPERATION_CANCELLED = 1101;
  public static final int BROKEN_PROMISE = 1100;
  /** A disk read or write failed (FoundationDB's {@code io_error}): the embedded engine's storage could not be read. */
  public static final int IO_ERROR = 1510;
  /**
   * A data file is damaged (FoundationDB's {@code file_corrupt}, which its storage servers raise and its clients
   * never see): the embedded engine found a RocksDB file of its storage corrupt (docs/embedded-durability.md).
   */
  public static final int FILE_CORRUPT = 1522;
  public static final int CLIENT_INVALID_OPERATION = 2000;
  public static final int COMMIT_READ_INCOMPLETE = 2002;
  public static final int KEY_OUTSIDE_LEGAL_RANGE = 2004;
  public static final int INVERTED_RANGE = 2005;
  public static final int INVALID_OPTION_VALUE = 2006;
  public static final int INVALID_OPTION = 2007;
  public static final int READ_VERSION_ALREADY_SET = 2010;
  public static final int VERSION_INVALID = 2011;
  public static final int RANGE_LIMITS_INVALID = 2012;
  public static final int INVALID_DATABASE_NAME = 2013;
  public static final int ATTRIBUTE_NOT_FOUND = 2014;
  public static final int FUTURE_NOT_SET = 2015;
  public static final int FUTURE_NOT_ERROR = 2016;
  public static final int USED_DURING_COMMIT = 2017;
  public static final int INVALID_MUTATION_TYPE = 2018;
  public static final int TRANSACTION_INVALID_VERSION = 2020;
  public static final int NO_COMMIT_VERSION = 2021;
  public static final int TRANSACTION_READ_ONLY = 2023;
  public static final int KEY_NOT_IN_SYSTEM_KEYSPACE = 2026; // unused by the engine, kept for completeness
  public static final int TRANSACTION_TOO_LARGE = 2101;
  public static final int KEY_TOO_LARGE = 2102;
  public static final int VALUE_TOO_LARGE = 2103;
  public static final int API_VERSION_UNSET = 2200;
  public static final int UNSUPPORTED_OPERATION = 2108; // "Operation is not supported"
  public static final int UNKNOWN_ERROR = 4000;
  public static final int INTERNAL_ERROR = 4100;

  private FdbErrors() {}

  /** A new exception with FoundationDB's message for {@code code}. */
  public static FDBException error(int code) {
    return new FDBException(message(code), code);
  }

  /** FoundationDB's description of {@code code}. */
  public static String message(int code) {
    switch (code) {
      case OPERATION_FAILED: return "Operation failed";
      case TIMED_OUT: return "Operation timed out";
      case TRANSACTION_TOO_OLD: return "Transaction is too old to perform reads or be committed";
      case FUTURE_VERSION: return "Request for future version";
      case NOT_COMMITTED: return "Transaction not committed due to conflict with another transaction";
      case COMMIT_UNKNOWN_RESULT: return "Transaction may or may not have committed";
      case TRANSACTION_CANCELLED: return "Operation aborted because the transaction was cancelled";
      case TRANSACTION_TIMED_OUT: return "Operation aborted because the transaction timed out";
      case TOO_MANY_WATCHES: return "Too many watches currently set";
      case WATCHES_DISABLED: return "Watches cannot be set if read your writes is disabled";
      case ACCESSED_UNREADABLE: return "Read or wrote an unreadable key";
      case PROCESS_BEHIND: return "Storage process does not have recent mutations";
      case DATABASE_LOCKED: return "Database is locked";
      case CLUSTER_VERSION_CHANGED: return "The protocol version of the cluster has changed";
      case OPERATION_CANCELLED: return "Asynchronous operation cancelled";
      case IO_ERROR: return "Disk i/o operation failed";
      case FILE_CORRUPT: return "A structurally corrupt data file was detected";
      case CLIENT_INVALID_OPERATION: return "Invalid API call";
      case COMMIT_READ_INCOMPLETE: return "Commit with incomplete read";
      case KEY_OUTSIDE_LEGAL_RANGE: return "Key outside legal range";
      case INVERTED_RANGE: return "Range begin key larger than end key";
      case INVALID_OPTION_VALUE: return "Option set with an invalid value";
      case INVALID_OPTION: return "Option not valid in this context";
      case READ_VERSION_ALREADY_SET: return "Transaction already has a read version set";
      case VERSION_INVALID: return "Version not valid";
      case RANGE_LIMITS_INVALID: return "Range limits not valid";
      case FUTURE_NOT_SET: return "Future not ready";
      case USED_DURING_COMMIT: return "Operation issued while a commit was outstanding";
      case INVALID_MUTATION_TYPE: return "Unrecognized atomic mutation type";
      case TRANSACTION_INVALID_VERSION: return "Transaction does not have a valid commit version";
      case NO_COMMIT_VERSION: return "Transaction is read-only and therefore does not have a commit version";
      case TRANSACTION_READ_ONLY: return "Attempted to commit a transaction specified as read-only";
      case TRANSACTION_TOO_LARGE: return "Transaction exceeds byte limit";
      case KEY_TOO_LARGE: return "Key length exceeds limit";
      case VALUE_TOO_LARGE: return "Value length exceeds limit";
      case UNSUPPORTED_OPERATION: return "Operation is not supported";
      case API_VERSION_UNSET: return "API version is not set";
      case INTERNAL_ERROR: return "An internal error occurred";
      default: return "An unknown error occurred";
    }
  }

  /** Whether {@code onError} retries this code (FoundationDB's {@code retryable} predicate). */
  public static boolean isRetryable(int code) {
    switch (code) {
      case NOT_COMMITTED:
      case TRANSACTION_TOO_OLD:
      case FUTURE_VERSION:
      case COMMIT_UNKNOWN_RESULT:
      case PROCESS_BEHIND:
      case DATABASE_LOCKED:
      case CLUSTER_VERSION_CHANGED:
      case COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED:
      case BATCH_TRANSACTION_THROTTLED:
      case GRV_PROXY_MEMORY_LIMIT_EXCEEDED:
      case TAG_THROTTLED:
      case TRANSACTION_REJECTED_RANGE_LOCKED:
        return true;
      default:
        return false;
    }
  }

  /**
   * The failure behind {@code t}: {@code t} with every {@link CompletionException} and
   * {@link ExecutionException} wrapper (that has a cause) peeled off. What a caller classifies or
   * reports, since futures wrap a failure in either depending on how it was read.
   */
  public static Throwable unwrap(Throwable t) {
    Throwable cur = t;
    while ((cur instanceof CompletionException || cur instanceof ExecutionException) && cur.getCause() != null) {
      cur = cur.getCause();
    }
    return cur;
  }

  /**
   * A future completed as {@code f} is, but failing with the cause itself (see {@link #unwrap}) rather than a
   * {@code CompletionException} around it: what the layers' public futures fail with.
   */
  public static <T> java.util.concurrent.CompletableFuture<T> unwrapped(java.util.concurrent.CompletableFuture<T> f) {
    java.util.concurrent.CompletableFuture<T> out = new java.util.concurrent.CompletableFuture<>();
    f.whenComplete((v, e) -> {
      if (e == null) {
        out.complete(v);
      } else {
        out.completeExceptionally(unwrap(e));
      }
    });
    return out;
  }

  /** The {@link FDBException} behind {@code t} (see {@link #unwrap}), or null when it is something else. */
  public static FDBException fdbException(Throwable t) {
    Throwable cause = unwrap(t);
    return cause instanceof FDBException ? (FDBException) cause : null;
  }

  /** The FoundationDB code behind {@code t}, or -1 when it is not an {@link FDBException}. */
  public static int codeOf(Throwable t) {
    FDBException e = fdbException(t);
    return e == null ? -1 : e.getCode();
  }
}
