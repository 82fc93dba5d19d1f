package io.github.fdbcoord.directory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Validation of directory paths coming from callers, typically decoded from JSON, where a "list of
 * strings" may hold anything. Every public operation of {@link DirectoryService} runs it.
 */
public final class DirectoryPaths {
  /** Longest path element accepted, in UTF-8 bytes: path elements become parts of node keys. */
  public static final int MAX_ELEMENT_BYTES = 1024;
  /** Most elements a path may have. */
  public static final int MAX_DEPTH = 64;

  private DirectoryPaths() {}

  /**
   * An immutable copy of {@code path} after checking that it is a non-empty list of non-null,
   * valid Unicode strings of reasonable length.
   *
   * @throws DirectoryServiceException with kind BAD_REQUEST saying what is wrong
   */
  public static List<String> validate(Object path) {
    return validate(path, false);
  }

  /** As {@link #validate(Object)}, but an empty path (the root) is accepted when {@code allowRoot}. */
  public static List<String> validate(Object path, boolean allowRoot) {
    if (path == null) {
      throw badRequest(null, "path is missing");
    }
    if (!(path instanceof List)) {
      throw badRequest(null, "path must be a list of strings, got " + path.getClass().getSimpleName());
    }
    List<?> raw = (List<?>) path;
    if (raw.isEmpty() && !allowRoot) {
      throw badRequest(List.of(), "path must not be empty: the root directory cannot be used this way");
    }
    if (raw.size() > MAX_DEPTH) {
      throw badRequest(null, "path has " + raw.size() + " elements, the limit is " + MAX_DEPTH);
    }
    List<String> out = new ArrayList<>(raw.size());
    for (int i = 0; i < raw.size(); i++) {
      out.add(element(raw, i));
    }
    return Collections.unmodifiableList(out);
  }

  private static String element(List<?> raw, int i) {
    Object e = raw.get(i);
    if (e == null) {
      throw badRequest(null, "path element " + i + " is null");
    }
    if (!(e instanceof String)) {
      throw badRequest(null, "path element " + i + " is not a string: " + e + " ("
          + e.getClass().getSimpleName() + ")");
    }
    String s = (String) e;
    if (!isWellFormed(s)) {
      // Tuple encoding would silently replace the lone surrogate, naming another directory.
      throw badRequest(null, "path element " + i + " is not valid Unicode (unpaired surrogate)");
    }
    int bytes = s.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_ELEMENT_BYTES) {
      throw badRequest(null, "path element " + i + " is " + bytes + " bytes long in UTF-8, the limit is "
          + MAX_ELEMENT_BYTES);
    }
    return s;
  }

  static boolean isWellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Checks a layer tag (null or empty: none): valid Unicode, at most {@link #MAX_ELEMENT_BYTES}
   * UTF-8 bytes. Returns it unchanged.
   */
  public static String validateLayer(String layer) {
    if (layer == null) {
      return null;
    }
    if (!isWellFormed(layer)) {
      throw badRequest(null, "layer tag is not valid Unicode (unpaired surrogate)");
    }
    int bytes = layer.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_ELEMENT_BYTES) {
      throw badRequest(null, "layer tag is " + bytes + " bytes long in UTF-8, the limit is " + MAX_ELEMENT_BYTES);
    }
    return layer;
  }

  /** A path as {@code /a/b} for messages. */
  public static String format(List<String> path) {
    return path == null || path.isEmpty() ? "/" : "/" + String.join("/", path);
  }

  private static DirectoryServiceException badRequest(List<String> path, String message) {
    return new DirectoryServiceException(DirectoryServiceException.Kind.BAD_REQUEST, path, message);
  }
}
