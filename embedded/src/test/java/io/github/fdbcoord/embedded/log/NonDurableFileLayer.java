package io.github.fdbcoord.embedded.log;

import java.io.Closeable;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * An in-memory {@link FileLayer} that is durable only where a real disk must be, after FoundationDB's
 * simulator (its {@code AsyncFileNonDurable}): at a simulated power loss it keeps what was forced and,
 * of what was written after the last force, only what the chosen {@link Loss} allows: nothing, a prefix
 * (the last write torn), or any mix of sectors (the page cache writes pages back in any order). Creations,
 * removals and renames are durable once their directory is synced; before that a prefix of them survives.
 *
 * <p>Use: open the engine or the log over it, arm a power loss ({@link #powerLossAtOperation}, {@link
 * #powerLossAtForce} or {@link #powerLoss()} now); from then on every operation fails with an
 * {@link IOException}, as if the machine had stopped. {@link #afterPowerLoss} gives the disk as the next
 * boot would find it, to reopen over. {@link #forceDelay} makes every force slow, as a disk's fsync is.
 * {@link #holdForce} stops the thread of a chosen force as it starts, until the test lets it go on or
 * cuts the power under it ({@link #powerLossAtForceOf} without the wait), so that a test decides which
 * thread meets a failure and what the others are doing meanwhile; {@link #holdSpaceCheck} stops the next
 * thread that asks for the free space.
 *
 * <p>Directories exist once created and are never lost; file locks are per instance (one "machine").
 */
public final class NonDurableFileLayer implements FileLayer {
  /** What a power loss keeps of the writes after a file's last force. */
  public enum Loss {
    /** Everything written survives: a process crash, not a power loss. */
    NOTHING,
    /** Only forced data survives. */
    ALL_UNFORCED,
    /** The writes survive in order up to a random point; the write at that point is cut at a random byte. */
    PREFIX_TORN,
    /** Each 512-byte sector independently holds its content after any one of the writes to it, or before them. */
    SECTORS_REORDERED
  }

  static final int SECTOR = 512;

  /** A write ({@code bytes} != null) or a truncation to {@code size}. */
  private record Op(long position, byte[] bytes, long size) {}

  /** A directory change: link {@code to} (a creation or the target of a rename), unlink {@code from}, or both (a rename). */
  private record DirOp(Path from, Path to, Inode inode) {}

  private static final class Inode {
    byte[] data;
    int length;
    byte[] durable;
    int durableLength;
    final List<Op> pending = new ArrayList<>();

    Inode(byte[] content) {
      data = content.clone();
      length = content.length;
      durable = content.clone();
      durableLength = content.length;
    }

    void write(long position, byte[] bytes) {
      int end = Math.toIntExact(position + bytes.length);
      if (end > data.length) {
        data = Arrays.copyOf(data, Math.max(end, data.length * 2));
      }
      if (position > length) {
        Arrays.fill(data, length, (int) position, (byte) 0);
      }
      System.arraycopy(bytes, 0, data, (int) position, bytes.length);
      length = Math.max(length, end);
    }

    void truncate(long size) {
      if (size < length) {
        length = (int) size;
      }
    }

    byte[] content() {
      return Arrays.copyOf(data, length);
    }
  }

  private final Map<Path, Inode> names = new HashMap<>();
  private final Map<Path, Inode> durableNames = new HashMap<>();
  private final List<DirOp> pendingDirOps = new ArrayList<>();
  private final Set<Path> directories = new HashSet<>();
  private final Set<Path> locks = new HashSet<>();
  private final CompletableFuture<Void> powerLost = new CompletableFuture<>();
  private long operations;
  private long forces;
  private long powerLossAtOperation = Long.MAX_VALUE;
  private long powerLossAtForce = Long.MAX_VALUE;
  private boolean lost;
  private volatile long forceDelayNanos;
  private volatile long usableSpace = Long.MAX_VALUE;
  /** Armed holds, oldest first; each one takes the first call it matches. */
  private final List<Hold> holds = new CopyOnWriteArrayList<>();

  public NonDurableFileLayer() {}

  // ---------------------------------------------------------------------------------------------
  // Test controls

  /** Every later force takes this long (outside any lock, as a disk's does), before it makes anything durable. */
  NonDurableFileLayer forceDelay(Duration delay) {
    forceDelayNanos = delay.toNanos();
    return this;
  }

  /** What {@link #usableSpace} answers from now on, for every directory (the disk itself has no size). */
  public void usableSpace(long bytes) {
    usableSpace = bytes;
  }

  /** Power is lost as the {@code n}-th mutating operation (counted from 1 since this instance began) starts; it fails. */
  public synchronized void powerLossAtOperation(long n) {
    powerLossAtOperation = n;
  }

  /** Power is lost as the {@code n}-th force (counted from 1) starts; that force fails and makes nothing durable. */
  public synchronized void powerLossAtForce(long n) {
    powerLossAtForce = n;
  }

  /**
   * Holds the next force (of a file, or a directory sync) of a path {@code which} accepts as it starts,
   * before it counts: its thread waits until {@link Hold#release} (the force then goes on) or
   * {@link Hold#releaseIntoPowerLoss} (it then fails, and with it everything after).
   */
  public Hold holdForce(Predicate<Path> which) {
    return arm(new Hold(Hold.Call.FORCE, which));
  }

  /**
   * Power is lost as the next force of a path {@code which} accepts starts, whichever thread it is on;
   * that force fails and makes nothing durable. Unlike {@link #powerLossAtForce}, forces of other files
   * (another thread's manifest or directory sync) do not take it.
   */
  public Hold powerLossAtForceOf(Predicate<Path> which) {
    Hold hold = holdForce(which);
    hold.releaseIntoPowerLoss();
    return hold;
  }

  /**
   * Holds the next call of {@link #usableSpace} (the engine's applier asks every 200 ms): a test stops the
   * applier with it, so that nothing but the threads it drives touches the disk meanwhile.
   */
  public Hold holdSpaceCheck() {
    return arm(new Hold(Hold.Call.SPACE_CHECK, p -> true));
  }

  private Hold arm(Hold hold) {
    holds.add(hold);
    return hold;
  }

  /** Lets the first armed hold that matches this call stop its thread. Called outside the layer's lock. */
  private void passHolds(Hold.Call call, Path path) {
    for (Hold hold : holds) {
      if (hold.call == call && hold.which.test(path) && holds.remove(hold)) {
        hold.hold();
        return;
      }
    }
  }

  /**
   * A call stopped as it starts (see {@link #holdForce}, {@link #holdSpaceCheck}); closing it releases it
   * if nothing else did, so that a failed test does not leave a thread of the engine waiting.
   */
  public final class Hold implements AutoCloseable {
    private enum Call { FORCE, SPACE_CHECK }

    private final Call call;
    private final Predicate<Path> which;
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean powerLossOnRelease;
    private volatile Thread thread;

    private Hold(Call call, Predicate<Path> which) {
      this.call = call;
      this.which = which;
    }

    private void hold() {
      thread = Thread.currentThread();
      reached.countDown();
      boolean interrupted = false;
      while (true) {
        try {
          released.await();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      if (powerLossOnRelease) {
        powerLoss();
      }
    }

    /**
     * Waits until a call was stopped here; returns its thread.
     *
     * @throws AssertionError if none came within a minute
     */
    public Thread awaitReached() throws InterruptedException {
      if (!reached.await(1, TimeUnit.MINUTES)) {
        throw new AssertionError("no " + call.name().toLowerCase(java.util.Locale.ROOT) + " reached the hold");
      }
      return thread;
    }

    /** Lets the held call (or the next one this hold takes) go on. */
    public void release() {
      released.countDown();
    }

    /** Cuts the power as the held call (or the next one this hold takes) goes on: a force then fails. */
    public void releaseIntoPowerLoss() {
      powerLossOnRelease = true;
      released.countDown();
    }

    /** Disarms the hold if nothing took it, and lets a held call go on. */
    @Override
    public void close() {
      holds.remove(this);
      released.countDown();
    }
  }

  /** Power is lost now. */
  public synchronized void powerLoss() {
    if (!lost) {
      lost = true;
      powerLost.complete(null);
    }
  }

  /** Completes when the power is lost. */
  CompletableFuture<Void> powerLost() {
    return powerLost;
  }

  public synchronized long operations() {
    return operations;
  }

  public synchronized long forces() {
    return forces;
  }

  /** The disk as the next boot finds it after the power loss (which this call causes, if it has not happened). */
  public synchronized NonDurableFileLayer afterPowerLoss(Random random, Loss loss) {
    powerLoss();
    NonDurableFileLayer next = new NonDurableFileLayer();
    next.directories.addAll(directories);
    Map<Path, Inode> survivingNames = new HashMap<>(durableNames);
    int keptDirOps = switch (loss) {
      case NOTHING -> pendingDirOps.size();
      case ALL_UNFORCED -> 0;
      default -> random.nextInt(pendingDirOps.size() + 1);
    };
    for (DirOp op : pendingDirOps.subList(0, keptDirOps)) {
      apply(survivingNames, op);
    }
    Map<Inode, Inode> images = new HashMap<>();
    // Sorted, so the same seed gives the same disk.
    for (Map.Entry<Path, Inode> e : new TreeMap<>(survivingNames).entrySet()) {
      Inode image = images.computeIfAbsent(e.getValue(), inode -> new Inode(imageOf(inode, random, loss)));
      next.names.put(e.getKey(), image);
      next.durableNames.put(e.getKey(), image);
    }
    return next;
  }

  /** The current content of {@code file} as this process sees it (the page cache), or null. */
  synchronized byte[] content(Path file) {
    Inode inode = names.get(file);
    return inode == null ? null : inode.content();
  }

  private static byte[] imageOf(Inode inode, Random random, Loss loss) {
    List<Op> ops = inode.pending;
    boolean truncations = ops.stream().anyMatch(op -> op.bytes == null);
    Inode image = new Inode(Arrays.copyOf(inode.durable, inode.durableLength));
    switch (loss) {
      case NOTHING:
        return inode.content();
      case ALL_UNFORCED:
        return image.content();
      case SECTORS_REORDERED:
        if (!truncations) {
          return reordered(image, ops, random);
        }
        // A truncation orders everything around it: fall back to a torn prefix.
        // fall through
      case PREFIX_TORN:
      default:
        int kept = random.nextInt(ops.size() + 1);
        for (int i = 0; i < kept; i++) {
          apply(image, ops.get(i));
        }
        if (kept < ops.size() && ops.get(kept).bytes != null) {
          Op torn = ops.get(kept);
          image.write(torn.position, Arrays.copyOf(torn.bytes, random.nextInt(torn.bytes.length + 1)));
        }
        return image.content();
    }
  }

  private static byte[] reordered(Inode image, List<Op> ops, Random random) {
    TreeMap<Long, List<Op>> bySector = new TreeMap<>();
    for (Op op : ops) {
      if (op.bytes.length == 0) {
        continue;
      }
      for (long s = op.position / SECTOR; s <= (op.position + op.bytes.length - 1) / SECTOR; s++) {
        bySector.computeIfAbsent(s, k -> new ArrayList<>()).add(op);
      }
    }
    for (Map.Entry<Long, List<Op>> e : bySector.entrySet()) {
      long sectorStart = e.getKey() * SECTOR;
      long sectorEnd = sectorStart + SECTOR;
      int kept = random.nextInt(e.getValue().size() + 1);
      for (Op op : e.getValue().subList(0, kept)) {
        long from = Math.max(sectorStart, op.position);
        long to = Math.min(sectorEnd, op.position + op.bytes.length);
        image.write(from, Arrays.copyOfRange(op.bytes, (int) (from - op.position), (int) (to - op.position)));
      }
    }
    return image.content();
  }

  private static void apply(Inode inode, Op op) {
    if (op.bytes == null) {
      inode.truncate(op.size);
    } else {
      inode.write(op.position, op.bytes);
    }
  }

  private static void apply(Map<Path, Inode> names, DirOp op) {
    if (op.from != null) {
      names.remove(op.from);
    }
    if (op.to != null) {
      names.put(op.to, op.inode);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // FileLayer

  /** Counts a mutating operation; throws once the power is (or now goes) out. */
  private void operation(boolean force) throws IOException {
    checkPower();
    operations++;
    if (force) {
      forces++;
    }
    if (operations >= powerLossAtOperation || (force && forces >= powerLossAtForce)) {
      powerLoss();
      checkPower();
    }
  }

  private void checkPower() throws IOException {
    if (lost) {
      throw new IOException("simulated power loss");
    }
  }

  private final class File implements OpenFile {
    private final Path path;
    private final Inode inode;
    private final boolean writable;
    private boolean closed;

    File(Path path, Inode inode, boolean writable) {
      this.path = path;
      this.inode = inode;
      this.writable = writable;
    }

    private void check(boolean write) throws IOException {
      if (closed) {
        throw new java.nio.channels.ClosedChannelException();
      }
      if (write && !writable) {
        throw new java.nio.channels.NonWritableChannelException();
      }
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      synchronized (NonDurableFileLayer.this) {
        checkPower();
        check(false);
        if (position >= inode.length) {
          return dst.hasRemaining() ? -1 : 0;
        }
        int n = (int) Math.min(dst.remaining(), inode.length - position);
        dst.put(inode.data, (int) position, n);
        return n;
      }
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
      synchronized (NonDurableFileLayer.this) {
        check(true);
        operation(false);
        byte[] bytes = new byte[src.remaining()];
        src.get(bytes);
        inode.write(position, bytes);
        inode.pending.add(new Op(position, bytes, -1));
      }
    }

    @Override
    public long size() throws IOException {
      synchronized (NonDurableFileLayer.this) {
        checkPower();
        check(false);
        return inode.length;
      }
    }

    @Override
    public void truncate(long size) throws IOException {
      synchronized (NonDurableFileLayer.this) {
        check(true);
        operation(false);
        inode.truncate(size);
        inode.pending.add(new Op(0, null, size));
      }
    }

    @Override
    public void force(boolean metadata) throws IOException {
      passHolds(Hold.Call.FORCE, path);
      long delay = forceDelayNanos;
      if (delay > 0) {
        try {
          Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted during a simulated fsync");
        }
      }
      synchronized (NonDurableFileLayer.this) {
        check(false);
        operation(true);
        inode.durable = inode.content();
        inode.durableLength = inode.length;
        inode.pending.clear();
      }
    }

    @Override
    public void close() {
      synchronized (NonDurableFileLayer.this) {
        closed = true;
      }
    }
  }

  @Override
  public synchronized OpenFile open(Path file, Mode mode) throws IOException {
    Path path = file.normalize();
    Inode inode = names.get(path);
    switch (mode) {
      case READ, WRITE -> {
        checkPower();
        if (inode == null) {
          throw new NoSuchFileException(path.toString());
        }
      }
      case CREATE_NEW -> {
        if (inode != null) {
          checkPower();
          throw new FileAlreadyExistsException(path.toString());
        }
        inode = create(path);
      }
      case CREATE_OR_TRUNCATE -> {
        if (inode == null) {
          inode = create(path);
        } else {
          operation(false);
          inode.truncate(0);
          inode.pending.add(new Op(0, null, 0));
        }
      }
      default -> throw new IllegalArgumentException(String.valueOf(mode));
    }
    return new File(path, inode, mode != Mode.READ);
  }

  private Inode create(Path path) throws IOException {
    if (!directories.contains(path.getParent())) {
      checkPower();
      throw new NoSuchFileException(path.getParent() + " (parent of " + path + ")");
    }
    operation(false);
    Inode inode = new Inode(new byte[0]);
    names.put(path, inode);
    pendingDirOps.add(new DirOp(null, path, inode));
    return inode;
  }

  @Override
  public synchronized void createDirectories(Path dir) throws IOException {
    checkPower();
    for (Path p = dir.normalize(); p != null; p = p.getParent()) {
      directories.add(p);
    }
  }

  @Override
  public synchronized List<Path> list(Path dir) throws IOException {
    checkPower();
    Path d = dir.normalize();
    if (!directories.contains(d)) {
      throw new NoSuchFileException(d.toString());
    }
    List<Path> out = new ArrayList<>();
    for (Path p : names.keySet()) {
      if (d.equals(p.getParent())) {
        out.add(p);
      }
    }
    out.sort(null);
    return out;
  }

  @Override
  public synchronized boolean deleteIfExists(Path file) throws IOException {
    Path path = file.normalize();
    checkPower();
    Inode inode = names.get(path);
    if (inode == null) {
      return false;
    }
    operation(false);
    names.remove(path);
    pendingDirOps.add(new DirOp(path, null, null));
    return true;
  }

  @Override
  public synchronized void rename(Path from, Path to) throws IOException {
    Path source = from.normalize();
    Path target = to.normalize();
    checkPower();
    Inode inode = names.get(source);
    if (inode == null) {
      throw new NoSuchFileException(source.toString());
    }
    operation(false);
    names.remove(source);
    names.put(target, inode);
    pendingDirOps.add(new DirOp(source, target, inode));
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    Path d = dir.normalize();
    // Outside the lock: a held sync must not stop the other threads' operations.
    passHolds(Hold.Call.FORCE, d);
    synchronized (this) {
      if (!directories.contains(d)) {
        checkPower();
        throw new FileNotFoundException(d.toString());
      }
      operation(true);
      for (var it = pendingDirOps.iterator(); it.hasNext(); ) {
        DirOp op = it.next();
        boolean inDir = (op.from == null || d.equals(op.from.getParent())) && (op.to == null || d.equals(op.to.getParent()));
        if (inDir) {
          apply(durableNames, op);
          it.remove();
        }
      }
    }
  }

  @Override
  public long usableSpace(Path dir) {
    passHolds(Hold.Call.SPACE_CHECK, dir);
    return usableSpace;
  }

  @Override
  public synchronized Closeable tryLock(Path file) throws IOException {
    Path path = file.normalize();
    checkPower();
    if (!locks.add(path)) {
      return null;
    }
    if (!names.containsKey(path)) {
      create(path);
    }
    return () -> {
      synchronized (NonDurableFileLayer.this) {
        locks.remove(path);
      }
    };
  }
}
