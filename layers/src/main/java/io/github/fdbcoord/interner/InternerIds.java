package io.github.fdbcoord.interner;

/**
 * Ids are unsigned 64-bit integers carried in a Java {@code long}: an id whose sequence has its top
 * bit set is negative as a signed long. Outside Java (JSON, HTTP) write them as unsigned decimal
 * strings with {@link #format(long)} and read them back with {@link #parse(String)}; JSON numbers
 * lose precision above 2^53.
 */
public final class InternerIds {
  private InternerIds() {}

  /** The id as an unsigned decimal string. */
  public static String format(long id) {
    return Long.toUnsignedString(id);
  }

  /**
   * An unsigned decimal string (0 to 18446744073709551615) as an id.
   *
   * @throws InternerException of kind BAD_REQUEST when the text is null, empty, signed, not decimal
   *     or out of range
   */
  public static long parse(String text) {
    if (text == null || text.isEmpty()) {
      throw InternerException.badRequest("id is missing: expected an unsigned decimal integer");
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        throw InternerException.badRequest("id '" + abbreviate(text)
            + "' is malformed: expected an unsigned decimal integer below 2^64");
      }
    }
    try {
      return Long.parseUnsignedLong(text);
    } catch (NumberFormatException e) {
      throw InternerException.badRequest("id '" + abbreviate(text) + "' is out of range: ids are below 2^64");
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "...";
  }
}
