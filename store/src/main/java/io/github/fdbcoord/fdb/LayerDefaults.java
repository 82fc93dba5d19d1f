package io.github.fdbcoord.fdb;

import java.util.List;

/**
 * Where the layers keep their data when not told otherwise. Every layer lives under one root
 * directory, {@link #ROOT_DIRECTORY}, in a sub-directory (or subspace) named after the layer, the
 * same layout the coordination service and the cluster manager use by default: a layer opened with
 * defaults sees what they wrote (for instance the cluster's locks are the mutex layer's mutexes).
 */
public final class LayerDefaults {
  /** The directory (and, for the subspace-based layers, the first tuple element) under which every layer lives. */
  public static final String ROOT_DIRECTORY = "fdbcoord";

  private LayerDefaults() {}

  /** The default path of {@code layer}'s directory: {@code [ROOT_DIRECTORY, layer]}. */
  public static List<String> directory(String layer) {
    return List.of(ROOT_DIRECTORY, layer);
  }
}
