package io.github.fdbcoord.directory;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.fdb.Versionstamps;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The directory service's keys, values and queries in one place.
 *
 * <p>The service stores one key of its own, under its metadata subspace {@code M}:
 * <pre>
 *   M["version"]   10-byte versionstamp of the last commit that changed the directory tree
 *                  through a service (absent until the first change)
 * </pre>
 * Everything else is fdb-java's {@link DirectoryLayer} node tree, reached only through the
 * DirectoryLayer queries below. Service paths are relative to a root path in that tree
 * ({@link #packPath} / {@link #unpackPath}); with the empty root path they are the tree's own.
 */
final class DirectorySchema {
  static final byte[] NO_VERSION = new byte[0];
  private static final int VERSION_LENGTH = 10;
  private static final Field SUBSPACE_PREFIX = subspacePrefixField();

  private final DirectoryLayer layer;
  private final byte[] versionKey;
  private final List<String> rootPath;

  DirectorySchema(DirectoryLayer layer, Subspace metadata) {
    this(layer, metadata, List.of());
  }

  /** A schema whose paths are relative to {@code rootPath} in {@code layer}'s tree. */
  DirectorySchema(DirectoryLayer layer, Subspace metadata, List<String> rootPath) {
    this.layer = Objects.requireNonNull(layer, "layer");
    this.versionKey = Objects.requireNonNull(metadata, "metadata").pack(Tuple.from("version"));
    this.rootPath = List.copyOf(rootPath);
  }

  // ---- keys and values -------------------------------------------------------------------

  byte[] versionKey() {
    return versionKey.clone();
  }

  /** Operand of SET_VERSIONSTAMPED_VALUE that stores the committing transaction's versionstamp. */
  static byte[] packVersionBump() {
    return Versionstamps.rawValue(new byte[0]);
  }

  /** The stored tree version; {@link #NO_VERSION} (empty) when the key is absent. */
  static byte[] unpackVersion(byte[] value) {
    if (value == null) {
      return NO_VERSION;
    }
    if (value.length != VERSION_LENGTH) {
      throw new IllegalStateException("directory service version must be a " + VERSION_LENGTH
          + "-byte versionstamp, found " + value.length + " bytes");
    }
    return value;
  }

  /** A layer tag as the directory layer stores it: UTF-8, empty for none. */
  static byte[] packLayer(String layerTag) {
    return layerTag == null ? new byte[0] : layerTag.getBytes(StandardCharsets.UTF_8);
  }

  static String unpackLayer(byte[] stored) {
    return stored == null ? "" : new String(stored, StandardCharsets.UTF_8);
  }

  /** The directory layer's (absolute) path for a service path, which is relative to the root path. */
  List<String> packPath(List<String> relative) {
    if (rootPath.isEmpty()) {
      return relative;
    }
    List<String> absolute = new ArrayList<>(rootPath.size() + relative.size());
    absolute.addAll(rootPath);
    absolute.addAll(relative);
    return List.copyOf(absolute);
  }

  /** The service path of a directory layer path; a path outside the root (never expected) is kept whole. */
  List<String> unpackPath(List<String> absolute) {
    if (absolute == null || rootPath.isEmpty()) {
      return absolute;
    }
    if (absolute.size() < rootPath.size() || !absolute.subList(0, rootPath.size()).equals(rootPath)) {
      return absolute;
    }
    return List.copyOf(absolute.subList(rootPath.size(), absolute.size()));
  }

  /** What a DirectoryLayer answer says about a directory, with a partition's prefix recovered. */
  DirectoryInfo unpackDirectory(DirectorySubspace subspace) {
    byte[] layerTag = subspace.getLayer();
    boolean partition = DirectoryInfo.PARTITION_LAYER.equals(unpackLayer(layerTag));
    byte[] prefix = partition ? partitionPrefix(subspace) : subspace.getKey();
    return new DirectoryInfo(unpackPath(subspace.getPath()), layerTag, prefix);
  }

  /**
   * fdb-java's DirectoryPartition refuses {@code getKey()} (its prefix is reserved for the
   * directories inside it) and has no other accessor for it, although the prefix is exactly what a
   * caller needs to know which key range the partition covers. Reading the field is the only way
   * short of re-implementing the node-tree walk, which this service must not do.
   */
  private static byte[] partitionPrefix(DirectorySubspace partition) {
    if (SUBSPACE_PREFIX == null) {
      throw new IllegalStateException("the prefix of a directory partition cannot be read on this JVM");
    }
    try {
      return ((byte[]) SUBSPACE_PREFIX.get(partition)).clone();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("the prefix of a directory partition cannot be read", e);
    }
  }

  private static Field subspacePrefixField() {
    try {
      Field f = Subspace.class.getDeclaredField("rawPrefix");
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * One page of {@code names}: those strictly after {@code startAfter} (null: from the start) in
   * the directory layer's order (UTF-8 bytes, unsigned), at most {@code limit} of them.
   */
  static DirectoryPage page(List<String> names, String startAfter, int limit) {
    byte[] after = startAfter == null ? null : startAfter.getBytes(StandardCharsets.UTF_8);
    List<byte[]> sorted = new ArrayList<>(names.size());
    for (String n : names) {
      sorted.add(n.getBytes(StandardCharsets.UTF_8));
    }
    sorted.sort(ByteArrayUtil::compareUnsigned);
    List<String> out = new ArrayList<>(Math.min(limit, sorted.size()));
    boolean more = false;
    for (byte[] n : sorted) {
      if (after != null && ByteArrayUtil.compareUnsigned(n, after) <= 0) {
        continue;
      }
      if (out.size() == limit) {
        more = true;
        break;
      }
      out.add(new String(n, StandardCharsets.UTF_8));
    }
    return new DirectoryPage(out, more);
  }

  // ---- queries on the service's own key --------------------------------------------------

  /**
   * The tree version, read with a read conflict (unless {@code tr} is a snapshot) so that a
   * transaction which used a cached answer conflicts with a concurrent change of the tree.
   * Completes with null when this very transaction changed the tree: its version is then unknown
   * until commit (FoundationDB refuses the read with 1036), and nothing it reads may be cached.
   */
  CompletableFuture<byte[]> readVersion(ReadTransaction tr) {
    return tr.get(versionKey)
        .handle(DirectorySchema::versionOrDirty);
  }

  private static byte[] versionOrDirty(byte[] value, Throwable error) {
    if (error == null) {
      return unpackVersion(value);
    }
    if (FdbErrors.codeOf(error) == FdbErrors.ACCESSED_UNREADABLE) {
      return null;
    }
    throw propagate(error);
  }

  /** Marks the tree as changed by this transaction: every cached answer of every service expires. */
  void bumpVersion(Transaction tr) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, versionKey, packVersionBump());
  }

  // ---- queries on the directory layer ----------------------------------------------------

  CompletableFuture<DirectoryInfo> open(ReadTransaction tr, List<String> path, byte[] layerTag) {
    return layer.open(tr, packPath(path), layerTag).thenApply(this::unpackDirectory);
  }

  CompletableFuture<DirectoryInfo> create(Transaction tr, List<String> path, byte[] layerTag) {
    return layer.create(tr, packPath(path), layerTag).thenApply(this::unpackDirectory);
  }

  CompletableFuture<DirectoryInfo> move(Transaction tr, List<String> from, List<String> to) {
    return layer.move(tr, packPath(from), packPath(to)).thenApply(this::unpackDirectory);
  }

  CompletableFuture<Void> remove(Transaction tr, List<String> path) {
    return layer.remove(tr, packPath(path));
  }

  CompletableFuture<Boolean> removeIfExists(Transaction tr, List<String> path) {
    return layer.removeIfExists(tr, packPath(path));
  }

  /** Names under {@code path}; the empty path lists the root path's children. */
  CompletableFuture<List<String>> listNames(ReadTransaction tr, List<String> path) {
    return layer.list(tr, packPath(path));
  }

  CompletableFuture<Boolean> exists(ReadTransaction tr, List<String> path) {
    return layer.exists(tr, packPath(path));
  }

  private static RuntimeException propagate(Throwable error) {
    return error instanceof RuntimeException ? (RuntimeException) error
        : new CompletionException(error);
  }
}
