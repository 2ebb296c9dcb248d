package dev.hbase.cache.operator.hbase;

import java.net.SocketAddress;
import java.util.function.Supplier;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBufAllocator;
import org.apache.hbase.thirdparty.io.netty.buffer.CompositeByteBuf;
import org.apache.hbase.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;

/**
 * Netty's allocator, with no buffer made larger than the cap and none able to grow past it. The
 * composite buffers are not capped: no frame decoder on the client's read path accumulates into
 * one.
 */
final class CappedAllocator implements ByteBufAllocator {
  private final ByteBufAllocator delegate;
  private final Supplier<SocketAddress> remote;

  CappedAllocator(ByteBufAllocator delegate, NioSocketChannel channel) {
    this.delegate = delegate;
    this.remote = channel::remoteAddress;
  }

  private int max(int initial, int max) {
    int cap = RpcAnswerCap.limit();
    if (initial > cap) {
      throw RpcAnswerCap.tooLarge(initial, remote.get());
    }
    return Math.min(max, cap);
  }

  @Override
  public ByteBuf buffer() {
    return delegate.buffer(Math.min(256, RpcAnswerCap.limit()), RpcAnswerCap.limit());
  }

  @Override
  public ByteBuf buffer(int initial) {
    return delegate.buffer(initial, max(initial, Integer.MAX_VALUE));
  }

  @Override
  public ByteBuf buffer(int initial, int max) {
    return delegate.buffer(initial, max(initial, max));
  }

  @Override
  public ByteBuf ioBuffer() {
    return delegate.ioBuffer(Math.min(256, RpcAnswerCap.limit()), RpcAnswerCap.limit());
  }

  @Override
  public ByteBuf ioBuffer(int initial) {
    return delegate.ioBuffer(initial, max(initial, Integer.MAX_VALUE));
  }

  @Override
  public ByteBuf ioBuffer(int initial, int max) {
    return delegate.ioBuffer(initial, max(initial, max));
  }

  @Override
  public ByteBuf heapBuffer() {
    return delegate.heapBuffer(Math.min(256, RpcAnswerCap.limit()), RpcAnswerCap.limit());
  }

  @Override
  public ByteBuf heapBuffer(int initial) {
    return delegate.heapBuffer(initial, max(initial, Integer.MAX_VALUE));
  }

  @Override
  public ByteBuf heapBuffer(int initial, int max) {
    return delegate.heapBuffer(initial, max(initial, max));
  }

  @Override
  public ByteBuf directBuffer() {
    return delegate.directBuffer(Math.min(256, RpcAnswerCap.limit()), RpcAnswerCap.limit());
  }

  @Override
  public ByteBuf directBuffer(int initial) {
    return delegate.directBuffer(initial, max(initial, Integer.MAX_VALUE));
  }

  @Override
  public ByteBuf directBuffer(int initial, int max) {
    return delegate.directBuffer(initial, max(initial, max));
  }

  @Override
  public CompositeByteBuf compositeBuffer() {
    return delegate.compositeBuffer();
  }

  @Override
  public CompositeByteBuf compositeBuffer(int components) {
    return delegate.compositeBuffer(components);
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer() {
    return delegate.compositeHeapBuffer();
  }

  @Override
  public CompositeByteBuf compositeHeapBuffer(int components) {
    return delegate.compositeHeapBuffer(components);
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer() {
    return delegate.compositeDirectBuffer();
  }

  @Override
  public CompositeByteBuf compositeDirectBuffer(int components) {
    return delegate.compositeDirectBuffer(components);
  }

  @Override
  public boolean isDirectBufferPooled() {
    return delegate.isDirectBufferPooled();
  }

  @Override
  public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
    return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
  }
}
