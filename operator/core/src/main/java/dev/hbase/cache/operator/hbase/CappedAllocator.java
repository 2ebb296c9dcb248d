package dev.hbase.cache.operator.hbase;

import org.apache.hbase.thirdparty.io.netty.buffer.AbstractByteBufAllocator;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;

/**
 * The allocator of one HBase connection: no buffer made larger than the cap and none able to grow
 * past it, each counted in the {@link ReadBudget} of all connections as it is made and as it grows.
 * Heap buffers, the reads' too ({@link #ioBuffer}: Netty's own default would be direct); direct
 * ones only where asked for. Composite buffers are made on this allocator, so what they allocate
 * when they merge their parts is counted as well.
 */
final class CappedAllocator extends AbstractByteBufAllocator {
  private final NioSocketChannel channel;
  private final ReadBudget.Holding holding;

  CappedAllocator(NioSocketChannel channel) {
    super(false);
    this.channel = channel;
    this.holding = new ReadBudget.Holding(channel);
  }

  /** The channel's share of the budget. */
  ReadBudget.Holding holding() {
    return holding;
  }

  private int max(int initial, int max) {
    int cap = RpcAnswerCap.limit();
    if (initial > cap) {
      throw RpcAnswerCap.tooLarge(initial, channel.remoteAddress());
    }
    return Math.min(max, cap);
  }

  @Override
  protected ByteBuf newHeapBuffer(int initial, int max) {
    return new ReadBudget.Heap(this, initial, max(initial, max), holding);
  }

  @Override
  protected ByteBuf newDirectBuffer(int initial, int max) {
    return new ReadBudget.Direct(this, initial, max(initial, max), holding);
  }

  @Override
  public ByteBuf ioBuffer() {
    return heapBuffer();
  }

  @Override
  public ByteBuf ioBuffer(int initial) {
    return heapBuffer(initial);
  }

  @Override
  public ByteBuf ioBuffer(int initial, int max) {
    return heapBuffer(initial, max);
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }
}
