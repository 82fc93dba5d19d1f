package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.fdb.FdbErrors;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Decodes the parameters of fdb-java's database and transaction options. */
public final class OptionParams {
  private OptionParams() {}

  /** An integer option's value (8 bytes, little-endian) within [min, max], else 2006 (invalid option value). */
  public static long intParam(byte[] param, long min, long max) {
    if (param == null || param.length != 8) {
      throw FdbErrors.error(FdbErrors.INVALID_OPTION_VALUE);
    }
    long v = ByteBuffer.wrap(param).order(ByteOrder.LITTLE_ENDIAN).getLong();
    if (v < min || v > max) {
      throw FdbErrors.error(FdbErrors.INVALID_OPTION_VALUE);
    }
    return v;
  }
}
