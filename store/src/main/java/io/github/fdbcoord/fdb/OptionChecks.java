package io.github.fdbcoord.fdb;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Validation of option values, shared by the layers' option builders so that every refusal names
 * the field and the bound the same way: {@code "<field> must be <bound>, got <value>"}. Each check
 * returns the value it accepted, to be assigned in one line.
 */
public final class OptionChecks {
  private OptionChecks() {}

  /** {@code value}, which must be at least {@code min}. */
  public static int atLeast(int value, int min, String field) {
    if (value < min) {
      throw new IllegalArgumentException(field + " must be at least " + min + ", got " + value);
    }
    return value;
  }

  /** {@code value}, which must be at least {@code min}. */
  public static long atLeast(long value, long min, String field) {
    if (value < min) {
      throw new IllegalArgumentException(field + " must be at least " + min + ", got " + value);
    }
    return value;
  }

  /** {@code value}, which must lie in {@code [min, max]}. */
  public static int between(int value, int min, int max, String field) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(field + " must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  /** {@code d}, which must be non-null and longer than zero. */
  public static Duration positive(Duration d, String field) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(field + " must be positive, got " + d);
    }
    return d;
  }

  /** {@code d}, which must be non-null and not negative (zero allowed). */
  public static Duration notNegative(Duration d, String field) {
    Objects.requireNonNull(d, field);
    if (d.isNegative()) {
      throw new IllegalArgumentException(field + " must not be negative, got " + d);
    }
    return d;
  }

  /**
   * An immutable copy of a directory path, which must be non-null, have non-empty string elements
   * and, unless {@code emptyAllowed}, at least one element ({@code why} says why it needs one).
   */
  public static List<String> directoryPath(List<String> path, boolean emptyAllowed, String why, String field) {
    Objects.requireNonNull(path, field);
    if (path.isEmpty() && !emptyAllowed) {
      throw new IllegalArgumentException(field + " must not be empty: " + why);
    }
    for (String p : path) {
      if (p == null || p.isEmpty()) {
        throw new IllegalArgumentException(field + " elements must be non-empty strings, got " + path);
      }
    }
    return List.copyOf(path);
  }
}
