package io.github.fdbcoord.cluster.impl;

/**
 * Where one node is in its life: new, joining, active, leaving, left, or crashed (the fault
 * injection of the tests). Every part of the node asks it before touching the store or a listener.
 * Internal to the cluster manager.
 */
public final class NodeState {
  /** The states, in the order a node goes through them (CRASHED only by fault injection). */
  public enum State { NEW, JOINING, ACTIVE, LEAVING, LEFT, CRASHED }

  private volatile State state = State.NEW;

  /** Moves from {@code from} to {@code to}; false (and no change) when the node is elsewhere. */
  public synchronized boolean move(State from, State to) {
    if (state != from) {
      return false;
    }
    state = to;
    return true;
  }

  /** Sets the state whatever it was. */
  public synchronized void set(State to) {
    state = to;
  }

  /** The current state. */
  public State get() {
    return state;
  }

  /** Whether the node is a member that may use the store and call listeners. */
  public boolean isActive() {
    return state == State.ACTIVE;
  }

  /** Whether the node stopped or is stopping: no more store calls, listener calls or retries. */
  public boolean stopped() {
    State s = state;
    return s == State.LEAVING || s == State.LEFT || s == State.CRASHED;
  }

  @Override
  public String toString() {
    return state.toString();
  }
}
