package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.hbase.HBaseCluster;

/** Opens an admin connection to one HBase cluster: {@code AdminHBaseCluster} in production. */
@FunctionalInterface
public interface HBaseConnector {
  HBaseCluster connect(String zookeeperQuorum, String znodeParent);
}
