package io.github.fdbcoord.store;

/** The configured engine could not be opened or reached. */
public class StoreUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
