package dev.hbase.cache.operator.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hbase.cache.operator.hbase.HBaseClusterException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The operator's HBase call slots: a namespace's share, the operator's in all, and who gets a slot
 * that comes free: the waiting namespace that holds the fewest, not the first that asked.
 */
class CallSlotsTest {
  static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void aFreedSlotGoesToTheNamespaceThatHoldsTheFewest() throws Exception {
    CallSlots slots = new CallSlots(2, 3);
    CallSlots.Slot a1 = slots.take("a", WAIT, "a-1");
    slots.take("a", WAIT, "a-2");
    slots.take("b", WAIT, "b-1"); // all three taken: a holds 2, b 1
    // b asks first for a second one, then c, which holds none
    CompletableFuture<CallSlots.Slot> b2 = take(slots, "b");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> slots.waiting() == 1);
    CompletableFuture<CallSlots.Slot> c1 = take(slots, "c");
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> slots.waiting() == 2);

    a1.close(); // one comes free
    assertThat(c1.get(10, TimeUnit.SECONDS)).as("the namespace that held none").isNotNull();
    assertThat(b2).as("b, which held one, waits on").isNotDone();
    c1.get().close();
    assertThat(b2.get(10, TimeUnit.SECONDS)).as("then b").isNotNull();
  }

  @Test
  void aNamespaceHoldsAtMostItsShareAndTheWaitIsBounded() throws Exception {
    CallSlots slots = new CallSlots(2, 6);
    slots.take("a", WAIT, "a-1");
    slots.take("a", WAIT, "a-2");
    assertThatThrownBy(() -> slots.take("a", Duration.ofMillis(200), "a-3"))
        .isInstanceOf(HBaseClusterException.class)
        .hasMessageContaining("2 at a time for namespace a");
    assertThat(slots.take("b", WAIT, "b-1")).as("another namespace's call").isNotNull();
    CallSlots full = new CallSlots(2, 1);
    full.take("a", WAIT, "a-1");
    assertThatThrownBy(() -> full.take("b", Duration.ofMillis(200), "b-1"))
        .hasMessageContaining("all its slots taken");
    assertThat(full.waiting()).as("a waiter that gave up is gone").isZero();
  }

  private static CompletableFuture<CallSlots.Slot> take(CallSlots slots, String namespace) {
    CompletableFuture<CallSlots.Slot> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(slots.take(namespace, WAIT, namespace));
              } catch (Throwable e) {
                f.completeExceptionally(e);
              }
            });
    t.setDaemon(true);
    t.start();
    return f;
  }
}
