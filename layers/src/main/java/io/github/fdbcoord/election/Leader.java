package io.github.fdbcoord.election;

import io.github.fdbcoord.api.FencingToken;
import java.util.Objects;

/**
 * Who leads {@code election} and since which epoch: the fencing token of the commit that made {@code candidate}
 * leader. Every later leadership of the same election has a strictly greater epoch.
 */
public record Leader(String election, String candidate, FencingToken epoch) {
  public Leader {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(candidate, "candidate");
    Objects.requireNonNull(epoch, "epoch");
  }
}
