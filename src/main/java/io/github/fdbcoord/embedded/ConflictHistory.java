package io.github.fdbcoord.embedded;

import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resolver's memory: for every key, the newest commit version that wrote it (through a
 * write-conflict range), kept as a step function over sorted boundaries, as FoundationDB's
 * resolver keeps its skip list. Entry {@code k -> v} means keys in [k, next boundary) were last
 * written at version v (0: not within the window). Accessed only under the commit lock.
 */
final class ConflictHistory {
  private final TreeMap<byte[], Long> steps = new TreeMap<>(Bytes.ORDER);
  /** Highest version of any write forgotten by {@link #forgetBefore}; older readers cannot be checked. */
  private long forgottenVersion;

  ConflictHistory() {
    steps.put(Bytes.EMPTY, 0L);
  }

  /** Whether a transaction reading at {@code readVersion} can still be checked exactly. */
  boolean canCheck(long readVersion) {
    return readVersion >= forgottenVersion;
  }

  /** Whether any write newer than {@code readVersion} touched [begin, end). */
  boolean conflicts(byte[] begin, byte[] end, long readVersion) {
    Map.Entry<byte[], Long> floor = steps.floorEntry(begin);
    if (floor.getValue() > readVersion) {
      return true;
    }
    for (Long v : steps.subMap(begin, false, end, false).values()) {
      if (v > readVersion) {
        return true;
      }
    }
    return false;
  }

  /** Records that [begin, end) was written at {@code version}, the newest version so far. */
  void write(byte[] begin, byte[] end, long version) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    Map.Entry<byte[], Long> atEnd = steps.floorEntry(end);
    if (Bytes.compare(atEnd.getKey(), end) != 0) {
      steps.put(end, atEnd.getValue());
    }
    steps.subMap(begin, true, end, false).clear();
    steps.put(begin, version);
  }

  /** Forgets writes at or below {@code version}, merging the boundaries they leave behind. */
  void forgetBefore(long version) {
    Iterator<Map.Entry<byte[], Long>> it = steps.entrySet().iterator();
    boolean previousForgotten = false;
    while (it.hasNext()) {
      Map.Entry<byte[], Long> e = it.next();
      long v = e.getValue();
      boolean forget = v <= version;
      if (forget) {
        if (v > forgottenVersion) {
          forgottenVersion = v;
        }
        if (previousForgotten) {
          it.remove();
        } else {
          e.setValue(0L);
        }
      }
      previousForgotten = forget;
    }
  }

  int size() {
    return steps.size();
  }
}
