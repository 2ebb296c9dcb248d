#!/usr/bin/env bash
# Compile e2e/workload/*.java (Workload.java, Balance.java, Secured.java) against the HBase image's jars (images/hbase/target/lib, made by
# `make hbase-image`) into e2e/target/workload/workload.jar; prints the jar's path.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/images/hbase/target/lib
out=$repo/e2e/target/workload
compgen -G "$lib/hbase-client-*.jar" >/dev/null || { echo "no HBase jars in $lib (make hbase-image)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out/classes"
javac -nowarn --release 17 -d "$out/classes" -cp "$lib/*" "$here"/*.java >&2
(cd "$out/classes" && jar cf "$out/workload.jar" .)
echo "$out/workload.jar"
