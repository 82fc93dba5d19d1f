package io.github.fdbcoord.client.wire;

import io.vertx.core.json.JsonArray;

import java.util.ArrayList;
import java.util.List;

/**
 * What every request and reply of the service's event-bus protocol shares: the header naming the
 * action, the addresses under a prefix and the failure codes (docs/vertx.md). The service encodes
 * with the codecs of this package and the client decodes with the same ones, so the two cannot
 * drift apart.
 */
public final class WireProtocol {
  /** The header that names a request's action; the body carries its arguments. */
  public static final String ACTION_HEADER = "action";
  /** The request is malformed: missing or mistyped field, invalid name, batch too large. */
  public static final int BAD_REQUEST = 400;
  /** The named thing (directory, interner namespace, unknown action) does not exist. */
  public static final int NOT_FOUND = 404;
  /** The request conflicts with the current state or ran out of time; retrying later may succeed. */
  public static final int CONFLICT = 409;
  /** The store or the serving node is unavailable, or the service is shutting down. */
  public static final int UNAVAILABLE = 503;
  /** The address prefix a service and a client use unless configured otherwise. */
  public static final String DEFAULT_PREFIX = "fdb";

  private WireProtocol() {}

  /** The address of the directory layer under {@code prefix}. */
  public static String directoryAddress(String prefix) {
    return prefix + ".directory";
  }

  /** The address of the high-contention allocator under {@code prefix}. */
  public static String allocatorAddress(String prefix) {
    return prefix + ".allocator";
  }

  /** The address of the string interner under {@code prefix}. */
  public static String internerAddress(String prefix) {
    return prefix + ".interner";
  }

  /** The address of the distributed mutex under {@code prefix}. */
  public static String mutexAddress(String prefix) {
    return prefix + ".mutex";
  }

  /** The address of leader election under {@code prefix} (an election is the mutex of the same name). */
  public static String electionAddress(String prefix) {
    return prefix + ".election";
  }

  /** The address of the fenced semaphore under {@code prefix}. */
  public static String semaphoreAddress(String prefix) {
    return prefix + ".semaphore";
  }

  /** The address of the read-write lock under {@code prefix}. */
  public static String readWriteLockAddress(String prefix) {
    return prefix + ".rwlock";
  }

  /** Where the lock events of mutex {@code name} are published. */
  public static String mutexEventsAddress(String prefix, String name) {
    return prefix + ".mutex.events." + name;
  }

  /** A fresh liveness address a client answers pings at while its acquires wait. */
  public static String livenessAddress(String prefix, String id) {
    return prefix + ".liveness." + id;
  }

  /** The strings of a JSON array of strings (null items stay null). */
  public static List<String> strings(JsonArray array) {
    List<String> out = new ArrayList<>(array.size());
    for (Object o : array) {
      out.add((String) o);
    }
    return out;
  }

  /** {@code strings} as a JSON array. */
  public static JsonArray array(List<String> strings) {
    return new JsonArray(new ArrayList<>(strings));
  }
}
