package io.github.fdbcoord.rwlock;

/** How a read-write lock is held: shared by any number of readers, or by one writer alone. */
public enum LockMode {
  /** Shared: held together with other readers, never with a writer. */
  READ,
  /** Exclusive: held by nobody else at the same time. */
  WRITE;

  /** Whether a grant in this mode may be held together with one in {@code other}. */
  public boolean isCompatibleWith(LockMode other) {
    return this == READ && other == READ;
  }
}
