package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/** Merges levels given oldest first; on equal keys a live chain wins, else the newest level's. */
final class MergedChains implements Iterator<VersionedStore.Chain> {
  private final Iterator<VersionedStore.Chain>[] levels;
  private final VersionedStore.Chain[] heads;
  private final int sign;
  private VersionedStore.Chain pending;

  @SafeVarargs
  MergedChains(boolean reverse, Iterator<VersionedStore.Chain>... levels) {
    this.levels = levels;
    this.heads = new VersionedStore.Chain[levels.length];
    this.sign = reverse ? -1 : 1;
    for (int l = 0; l < levels.length; l++) {
      heads[l] = advance(l);
    }
    pending = find();
  }

  private VersionedStore.Chain advance(int level) {
    Iterator<VersionedStore.Chain> it = levels[level];
    return it != null && it.hasNext() ? it.next() : null;
  }

  /** The next live chain in order, consuming every level's chain of the same key. */
  private VersionedStore.Chain find() {
    while (true) {
      int best = -1;
      for (int l = 0; l < heads.length; l++) {
        if (heads[l] == null) {
          continue;
        }
        // On equal keys l, the newer level, wins.
        if (best < 0 || Bytes.compare(heads[l].bytes, heads[best].bytes) * sign <= 0) {
          best = l;
        }
      }
      if (best < 0) {
        return null;
      }
      VersionedStore.Chain winner = heads[best];
      for (int l = 0; l < heads.length; l++) {
        if (heads[l] != null && (l == best || Arrays.equals(heads[l].bytes, winner.bytes))) {
          // A key has at most one live chain: it wins over killed ones in any level (the skip
          // list and the run table of one memtable are not ordered by age).
          if (winner.killed() && !heads[l].killed()) {
            winner = heads[l];
          }
          heads[l] = advance(l);
        }
      }
      if (!winner.killed()) {
        return winner;
      }
    }
  }

  @Override
  public boolean hasNext() {
    return pending != null;
  }

  @Override
  public VersionedStore.Chain next() {
    if (pending == null) {
      throw new NoSuchElementException();
    }
    VersionedStore.Chain c = pending;
    pending = find();
    return c;
  }
}
