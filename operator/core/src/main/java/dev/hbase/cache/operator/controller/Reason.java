package dev.hbase.cache.operator.controller;

/**
 * The reasons the controller gives, each sent as its name: on a Kubernetes event ({@link Events})
 * or on a condition ({@link StatusAggregator}). Tests, the kind suite and users' alerts match on
 * these names: a name here is part of the operator's interface. The other reasons on the wire are
 * names of enums too: why a target cannot be observed ({@link Observation.Why}), why a roll waits
 * or is blocked ({@code RollModel.Reason}); the roller names the events of a roll itself ({@code
 * RollModel.Event}).
 */
public enum Reason {
  // ---------------------------------------------------------------- refusals: event and condition

  /** The planner refused the policy for this container (Valid False). */
  PlanRefused,
  /** The container's memory limit changed since the last plan and the planner refuses the new. */
  MemoryLimitRefused,
  /** storage.mountPath is, contains or lies under another mount of the container. */
  MountPathConflict,
  /** The base hbase-site cannot be read or merged. */
  BaseConfigInvalid,
  /** An object the operator would write exists and is not the operator's for this policy. */
  ObjectNotOwned,
  /**
   * The derived RegionServer ConfigMap would exceed the operator's bound (900 KiB) with the files
   * of every plan a pod still runs: nothing written, the roll Blocked (Degraded, Ready).
   */
  SiteConfigTooLarge,
  /** spec.hbase.kerberos.keytabSecret is not there, or has no such key. */
  KeytabSecretNotFound,
  /** The operator may not read the keytab Secret (no RoleBinding in the policy's namespace). */
  KeytabSecretForbidden,
  /** The keytab Secret's annotation does not name the policy. */
  KeytabSecretNotAllowed,
  /** The Kerberos login from the keytab failed (no key for the principal, KDC refused or away). */
  KerberosLoginFailed,
  /**
   * The info servers serve HTTPS and no CA is given: the base hbase-site sets hbase.ssl.enabled (or
   * asks SPNEGO, which needs TLS) without spec.hbase.tls, or its ConfigMap or key is not there.
   */
  TlsCaMissing,
  /** spec.hbase.tls's ConfigMap key holds no PEM certificate. */
  TlsCaInvalid,
  /**
   * An info server's certificate does not chain to spec.hbase.tls's CA or does not carry the pod's
   * DNS name, or the server does not speak TLS.
   */
  TlsUntrusted,
  /**
   * The base hbase-site asks SPNEGO of the info servers and the policy names no Kerberos identity.
   */
  SpnegoWithoutKerberos,
  /** An info server refused SPNEGO as the policy's identity, or the KDC has no HTTP/ principal. */
  SpnegoRefused,
  /** The StatefulSet's serviceName is no DNS label: no name a pod's certificate could carry. */
  InfoServerNameInvalid,
  /**
   * Degraded: an info server held the operator's ask to its deadline or sent more than it reads
   * (the message names each pod and the address asked); that pod's figures are missing, and it is
   * asked again after a while. The roll and other policies go on.
   */
  InfoServerStalled,

  // ---------------------------------------------------------------- events

  /**
   * The cache-map-guard removed an empty persistence map (HBase 2.6.4 writes it when its L2 holds
   * no block, and dies reading it at the next start).
   */
  EmptyCacheMapRemoved,
  /**
   * The cache-map-guard removed a persistence map that ends before the chunks its header counts
   * (HBase 2.6.4 dies reading one cut at a chunk's boundary, and drops one cut inside a chunk).
   */
  TruncatedCacheMapRemoved,
  /** The cache-map-guard removed a file that is no persistence map (zero-filled, say). */
  UnreadableCacheMapRemoved,
  /**
   * A stopping pod's grace period would not leave its RegionServer HBase's own shutdown time after
   * the warm stop's hold (a short --grace-period, an eviction, the kubelet's own stop): the
   * operator stopped the RegionServer through HBase.
   */
  WarmStopShortened,
  /** A new plan drops the persisted caches at the next restarts (also a condition type). */
  CacheResetPending,
  /** Another PodDisruptionBudget selects the RegionServers: the operator keeps none. */
  PodDisruptionBudgetExists,
  /** spec.masterRef names no workload. */
  MasterNotFound,
  /** The master workload mounts no volume from the base ConfigMap. */
  MasterConfigVolumeNotFound,
  /** An action of the roller (a delete, a drain, the balancer) failed. */
  ActionFailed,
  /**
   * HBase refused an action of the roller (a drain, a reload, the balancer) for want of a
   * permission: event, and Degraded reason until it succeeds.
   */
  AccessDenied,
  /** The cache PVCs grow. */
  CacheVolumeExpanding,
  /** The StatefulSet is recreated with the cache volume template (event and Progressing). */
  RecreatingStatefulSet,
  /** The sizing advice changed. */
  RecommendationChanged,
  /** autoTune mode Apply would not write the recommendation into the spec. */
  RecommendationNotApplied,
  /** autoTune mode Apply wrote the recommendation into the spec. */
  RecommendationApplied,
  /**
   * The HMaster reports an HBase release of another line than the policy is planned for
   * (spec.hbase.version, default 2.6): the plan may carry keys that line does not know.
   */
  HBaseVersionMismatch,
  /**
   * The roller asked HBase to expire a RegionServer instance whose container the kubelet reported
   * terminated, and the check before it refused: the instance answers at its endpoint as itself, or
   * nothing proves it gone. Its ZooKeeper session decides instead (Warning).
   */
  ExpiryRefused,
  /**
   * A deleted policy kept (its finalizer) until HBase is given back: the master away, the cluster
   * not shown to be the policy's, a give-back that did not take (Warning; condition
   * GiveBackPending).
   */
  GiveBackPending,
  /**
   * A deleted policy let go without HBase given back: cache.hbase.dev/abandon-give-back, or no
   * cluster left in its namespace to give back to (Warning).
   */
  GiveBackAbandoned,

  // ---------------------------------------------------------------- conditions

  /** Valid: the policy was planned. */
  Planned,
  /** CacheResetPending: the new plan changes the cache layout. */
  CacheLayoutChanged,
  /** CacheResetPending no more: the roll that dropped the caches finished. */
  RollFinished,
  /** Degraded, Ready: the cache volume cannot be provided as planned. */
  StorageBlocked,
  /** Degraded False: the roll goes as planned. */
  AsPlanned,
  /** Degraded False after a {@link #ReconcileError}: the last reconcile succeeded. */
  Recovered,
  /** Degraded, Ready: a reconcile threw (an API or HBase call failed). */
  ReconcileError,
  /** Progressing False: every RegionServer runs the plan. */
  UpToDate,
  /** Progressing False: spec.rollout.paused. */
  Paused,
  /** Progressing False: the roll is blocked (Degraded says why). */
  Blocked,
  /** Progressing True: the roll goes on, nothing to wait for. */
  Rolling,
  /** Ready: all RegionServers run the planned cache. */
  Applied,
  /** Ready False: a roll is pending or under way. */
  RollPending,
  /** Balanced: every Ready RegionServer serves the mean number of regions, within one. */
  RegionsEven,
  /** Balanced False: a Ready RegionServer serves more than one region off the mean. */
  RegionsSkewed
}
