package io.github.fdbcoord.api;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An opened directory: its path, layer tag and key prefix. Immutable (byte arrays are copied in
 * and out).
 */
public final class DirectoryInfo {
  /** The layer tag fdb-java's DirectoryLayer gives partitions. */
  public static final String PARTITION_LAYER = "partition";

  private final List<String> path;
  private final byte[] layer;
  private final byte[] prefix;
  private final boolean partition;

  public DirectoryInfo(List<String> path, byte[] layer, byte[] prefix) {
    this.path = List.copyOf(Objects.requireNonNull(path, "path"));
    this.layer = Objects.requireNonNull(layer, "layer").clone();
    this.prefix = Objects.requireNonNull(prefix, "prefix").clone();
    this.partition = Arrays.equals(this.layer, PARTITION_LAYER.getBytes(StandardCharsets.UTF_8));
  }

  public List<String> path() {
    return path;
  }

  /** The layer tag as stored (empty when none). */
  public byte[] layerBytes() {
    return layer.clone();
  }

  /** The layer tag decoded as UTF-8 (empty when none). */
  public String layer() {
    return new String(layer, StandardCharsets.UTF_8);
  }

  /** The key prefix of the directory's contents; for a partition, the prefix of everything inside it. */
  public byte[] prefix() {
    return prefix.clone();
  }

  /** {@link #prefix()} as lower-case hex, the form JSON-facing APIs use. */
  public String prefixHex() {
    return HexFormat.of().formatHex(prefix);
  }

  /** Whether this directory is a partition (layer tag "partition"). */
  public boolean isPartition() {
    return partition;
  }

  /**
   * The prefix under which to store keys (wrap it in fdb-java's {@code Subspace}). A partition's own
   * prefix is reserved for the directories inside it, so, as in fdb-java, a partition has none.
   *
   * @throws IllegalStateException for a partition
   */
  public byte[] keyPrefix() {
    if (partition) {
      throw new IllegalStateException("directory " + ("/" + String.join("/", path))
          + " is a partition: store keys in directories inside it, not in the partition itself");
    }
    return prefix.clone();
  }

  /** A JSON-ready view: {@code path} (list), {@code layer} (string), {@code prefix} (hex), {@code partition}. */
  public Map<String, Object> toJsonMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("path", path);
    m.put("layer", layer());
    m.put("prefix", prefixHex());
    m.put("partition", partition);
    return m;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof DirectoryInfo)) {
      return false;
    }
    DirectoryInfo other = (DirectoryInfo) o;
    return path.equals(other.path) && Arrays.equals(layer, other.layer) && Arrays.equals(prefix, other.prefix);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * path.hashCode() + Arrays.hashCode(layer)) + Arrays.hashCode(prefix);
  }

  @Override
  public String toString() {
    return "DirectoryInfo{path=" + ("/" + String.join("/", path)) + ", layer='" + layer() + "', prefix="
        + prefixHex() + (partition ? ", partition" : "") + "}";
  }
}
