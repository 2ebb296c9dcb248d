#!/usr/bin/env bash
# Memory of the kind cluster $KIND_CLUSTER: the node container (docker stats) and each container's
# working set as the kubelet reports it (crictl stats inside the node), in MiB.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
node=$KIND_CLUSTER-control-plane
docker stats --no-stream --format 'node container {{.Name}}: {{.MemUsage}}' "$node"
docker exec "$node" crictl stats -o json 2>/dev/null | jq -r '
  .stats[] | [.attributes.labels["io.kubernetes.pod.namespace"], .attributes.labels["io.kubernetes.pod.name"],
  .attributes.metadata.name, ((.memory.workingSetBytes.value // 0 | tonumber) / 1048576 | floor)] | @tsv' |
  sort | awk -F'\t' 'BEGIN{printf "%-14s %-34s %-22s %s\n","NAMESPACE","POD","CONTAINER","WORKING_SET_MiB"}
    {printf "%-14s %-34s %-22s %d\n",$1,$2,$3,$4; t+=$4} END{printf "total working set: %d MiB\n", t}'
