package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.ResourceEventAware;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The objects of one kind that policies name, each watched on its own: one informer per {@code
 * namespace/name} with the field selector {@code metadata.name=<name>}, so the API server sends the
 * operator that object and nothing else of its namespace. A watch lives while some policy holds its
 * name (reference counts by policy) and stops with the last: what the operator caches is bounded by
 * what policies name, never by what a namespace holds. Kubernetes' own kubelet reads the ConfigMaps
 * and Secrets its pods mount the same way (one watch per referenced object, dropped with the last
 * pod that references it).
 *
 * <p>Names come from the policy's spec ({@code names}, held as the policies arrive, change and go:
 * JOSDK tells every {@link ResourceEventAware} event source of the policies' events) or from the
 * reconcile ({@link #hold}: the pods, whose names follow from the StatefulSet). A change of a held
 * object triggers the reconcile of each policy that holds it. A read of a held name waits a moment
 * for its watch's first list, else reads the API server once (a new watch on a busy API server:
 * hundreds start together when the operator starts) and the policy reconciles again once the watch
 * has it; a read of a name the policy does not hold is one read too, never cached.
 */
final class NamedWatches<R extends HasMetadata> extends AbstractEventSource<R, BlockCachePolicy>
    implements ResourceEventAware<BlockCachePolicy> {
  private static final Logger log = LoggerFactory.getLogger(NamedWatches.class);

  /** How long a read waits for a new watch's first list before it reads the API server. */
  static final Duration SYNC = Duration.ofSeconds(2);

  private final Class<R> type;
  private final KubernetesClient client;
  private final Function<BlockCachePolicy, Set<String>> names;

  /** A label whose value must be the object's name (also asked of the API server), or null. */
  private final String nameLabel;

  /** Guarded by this: the watches, and what each policy holds. */
  private final Map<ResourceID, Watch> watches = new HashMap<>();

  private final Map<ResourceID, Set<ResourceID>> held = new HashMap<>();
  private boolean started;

  /**
   * @param names the names a policy's spec holds in its namespace; null: only {@link #hold}
   * @param nameLabel a label each object must carry with its own name as the value (the pods: the
   *     StatefulSet controller's {@code statefulset.kubernetes.io/pod-name}), or null
   */
  NamedWatches(
      String name,
      Class<R> type,
      KubernetesClient client,
      Function<BlockCachePolicy, Set<String>> names,
      String nameLabel,
      WatchStarts starts) {
    super(type, name);
    this.type = type;
    this.client = client;
    this.names = names;
    this.nameLabel = nameLabel;
    this.starts = starts;
  }

  private final WatchStarts starts;

  /** The object {@code id} as the API server is asked for it: its name, and the label if any. */
  private io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable<
          R,
          io.fabric8.kubernetes.api.model.KubernetesResourceList<R>,
          io.fabric8.kubernetes.client.dsl.Resource<R>>
      select(ResourceID id) {
    var inNs = client.resources(type).inNamespace(id.getNamespace().orElseThrow());
    var named = inNs.withField("metadata.name", id.getName());
    return nameLabel == null ? named : named.withLabel(nameLabel, id.getName());
  }

  /** One object's informer and the policies that hold it. */
  private final class Watch {
    final ResourceID id;
    final Set<ResourceID> holders = new HashSet<>();
    final SharedIndexInformer<R> informer;

    /** Completes once the first list is in the store (and events from here on are passed on). */
    final CompletableFuture<Void> synced = new CompletableFuture<>();

    /** Stopped: its last holder let go (a read that raced with that reads the API server). */
    volatile boolean stopped;

    /** A read went to the API server before the first list: its holders reconcile after it. */
    volatile boolean readAround;

    /** Tells {@link WatchStarts} that this start is done (its first list, a failure, or a stop). */
    volatile Runnable started = () -> {};

    Watch(ResourceID id) {
      this.id = id;
      this.informer = select(id).runnableInformer(0);
      informer.addEventHandler(
          new ResourceEventHandler<R>() {
            @Override
            public void onAdd(R obj) {
              changed();
            }

            @Override
            public void onUpdate(R oldObj, R newObj) {
              changed();
            }

            @Override
            public void onDelete(R obj, boolean deletedFinalStateUnknown) {
              changed();
            }
          });
    }

    /** Queued behind the other watches' first lists ({@link WatchStarts}). */
    void start() {
      // a list or watch that fails (a timeout, the API server away, no rights) is tried again
      // with fabric8's backoff until the watch stops, also before its first list
      informer.exceptionHandler(
          (isStarted, t) -> {
            log.debug("{}: {} (tried again)", what(id), t.toString());
            started.run();
            return !stopped;
          });
      starts.submit(
          done -> {
            started = done;
            if (stopped) {
              done.run();
              return;
            }
            java.util.concurrent.CompletionStage<Void> first;
            try {
              first = informer.start();
            } catch (IllegalStateException stoppedMeanwhile) { // fabric8: no start after a stop
              done.run();
              return;
            }
            first.whenComplete(
                (ok, failed) -> {
                  done.run();
                  if (failed == null) {
                    synced.complete(null);
                    if (readAround) {
                      changed(); // what was read meanwhile may be older than the list
                    }
                  } else {
                    synced.completeExceptionally(failed);
                  }
                });
          });
    }

    void stop() {
      stopped = true;
      started.run();
      informer.stop();
    }

    /**
     * Each holder reconciles. The first list's adds are not passed on: a policy reads a new watch
     * only after {@link #synced}, so it sees them anyway.
     */
    void changed() {
      if (!synced.isDone()) {
        return;
      }
      List<ResourceID> to;
      synchronized (NamedWatches.this) {
        to = List.copyOf(holders);
      }
      to.forEach(p -> getEventHandler().handleEvent(new Event(p)));
    }

    /**
     * The object as the watch has it, once it has its first list (waiting until {@code deadline});
     * else as the API server has it now.
     */
    Optional<R> read(long deadline) {
      try {
        synced.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (!stopped) {
          return Optional.ofNullable(informer.getStore().getByKey(key(id)));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new KubernetesClientException("interrupted", e);
      } catch (ExecutionException | TimeoutException e) {
        readAround = true;
      }
      return readNow(id);
    }
  }

  @Override
  public void onResourceCreated(BlockCachePolicy policy) {
    holdSpec(policy);
  }

  @Override
  public void onResourceUpdated(BlockCachePolicy policy, BlockCachePolicy old) {
    holdSpec(policy);
  }

  @Override
  public void onResourceDeleted(BlockCachePolicy policy) {
    hold(ResourceID.fromResource(policy), Set.of());
  }

  private void holdSpec(BlockCachePolicy policy) {
    if (names != null) {
      hold(policy, names.apply(policy));
    }
  }

  /** The policy holds exactly these names of its namespace from now on (of this kind). */
  void hold(BlockCachePolicy policy, Set<String> namesInNamespace) {
    String ns = policy.getMetadata().getNamespace();
    hold(
        ResourceID.fromResource(policy),
        namesInNamespace.stream().map(n -> new ResourceID(n, ns)).collect(Collectors.toSet()));
  }

  private synchronized void hold(ResourceID policy, Set<ResourceID> ids) {
    Set<ResourceID> before = held.getOrDefault(policy, Set.of());
    if (before.equals(ids)) {
      return;
    }
    for (ResourceID id : ids) {
      if (!before.contains(id)) {
        Watch w = watches.computeIfAbsent(id, Watch::new);
        w.holders.add(policy);
        if (started && w.holders.size() == 1) {
          w.start();
        }
      }
    }
    for (ResourceID id : before) {
      if (!ids.contains(id)) {
        Watch w = watches.get(id);
        w.holders.remove(policy);
        if (w.holders.isEmpty()) {
          watches.remove(id);
          w.stop();
        }
      }
    }
    if (ids.isEmpty()) {
      held.remove(policy);
    } else {
      held.put(policy, Set.copyOf(ids));
    }
  }

  /** The names the policy holds (of this kind, in its namespace). */
  synchronized Set<String> held(BlockCachePolicy policy) {
    return held.getOrDefault(ResourceID.fromResource(policy), Set.of()).stream()
        .map(ResourceID::getName)
        .collect(Collectors.toSet());
  }

  /**
   * The object {@code name} of the policy's namespace: from its watch when the policy holds it,
   * else one read of the API server (a name the policy reads seldom: it is not cached). A policy
   * that holds nothing of this kind yet holds what its spec names from here on, should its event
   * have been missed (not otherwise: the reconcile may run on an older version of the policy than
   * the event's).
   */
  Optional<R> get(BlockCachePolicy policy, String name) {
    if (held(policy).isEmpty()) {
      holdSpec(policy);
    }
    ResourceID id = new ResourceID(name, policy.getMetadata().getNamespace());
    Watch w = watch(ResourceID.fromResource(policy), id);
    return w == null ? readNow(id) : w.read(deadline());
  }

  /** The object as the API server has it now (by name, and label if any): one read, not cached. */
  private Optional<R> readNow(ResourceID id) {
    return select(id).list().getItems().stream().findFirst();
  }

  /** Every object the policy holds that exists, as its watch has it. */
  List<R> list(BlockCachePolicy policy) {
    ResourceID p = ResourceID.fromResource(policy);
    List<R> out = new ArrayList<>();
    long deadline = deadline(); // one wait for all of them
    for (String name : held(policy)) {
      Watch w = watch(p, new ResourceID(name, policy.getMetadata().getNamespace()));
      if (w != null) {
        w.read(deadline).ifPresent(out::add);
      }
    }
    return out;
  }

  /**
   * The policy's watch of {@code id}, or null when it holds none; one whose start failed (no
   * rights, the API server away) is replaced by a new one, which the read then waits for.
   */
  private synchronized Watch watch(ResourceID policy, ResourceID id) {
    Watch w = watches.get(id);
    if (w == null || !w.holders.contains(policy)) {
      return null;
    }
    if (w.synced.isCompletedExceptionally()) {
      Watch again = new Watch(id);
      again.holders.addAll(w.holders);
      watches.put(id, again);
      if (started) {
        again.start();
      }
      return again;
    }
    return w;
  }

  private static long deadline() {
    return System.nanoTime() + SYNC.toNanos();
  }

  /** The objects watched ({@code namespace/name}), whether they exist or not. */
  synchronized Set<String> watchedNames() {
    return watches.keySet().stream().map(NamedWatches::key).collect(Collectors.toSet());
  }

  /** The objects the watches hold ({@code namespace/name}): at most one per name watched. */
  synchronized List<R> cached() {
    return watches.values().stream().flatMap(w -> w.informer.getStore().list().stream()).toList();
  }

  @Override
  public Set<R> getSecondaryResources(BlockCachePolicy primary) {
    return Set.copyOf(list(primary));
  }

  @Override
  public void start() {
    List<Watch> starting;
    synchronized (this) {
      started = true;
      starting = List.copyOf(watches.values());
    }
    starting.forEach(Watch::start);
    // the policies known at start (JOSDK starts their informer first): their watches listed before
    // the first reconcile, as JOSDK's own informers are (a minute at most for all)
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    for (Watch w : starting) {
      try {
        w.synced.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (ExecutionException | TimeoutException e) {
        log.warn(
            "{}: no first list yet (its reconcile waits for it): {}", what(w.id), e.toString());
      }
    }
    super.start();
  }

  @Override
  public void stop() {
    List<Watch> all;
    synchronized (this) {
      started = false;
      all = List.copyOf(watches.values());
      watches.clear();
      held.clear();
    }
    all.forEach(Watch::stop);
    super.stop();
  }

  private String what(ResourceID id) {
    return type.getSimpleName() + " " + key(id);
  }

  private static String key(ResourceID id) {
    return id.getNamespace().orElseThrow() + "/" + id.getName();
  }
}
