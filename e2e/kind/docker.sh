#!/usr/bin/env bash
# Make a Docker daemon available: nothing to do when `docker info` works; otherwise install
# Docker from the distribution (Debian/Ubuntu: apt-get install docker.io) when run as root with
# apt-get, and start dockerd (systemd when it is PID 1, else `nohup dockerd`, log /tmp/dockerd.log).
# With ../shared/kind-offline next to the repo, also runs its setup-docker-runtime.sh (a runc wrapper
# for hosts whose capability bounding set is not full, as on this workplace's VMs).
# Exits non-zero when Docker cannot be had here (not root, no apt-get, no daemon permissions).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t0=$SECONDS
if ! docker info >/dev/null 2>&1; then
  if ! have dockerd; then
    [ "$(id -u)" = 0 ] || die "docker is not running and dockerd is not installed; not root, so not installing it"
    have apt-get || die "dockerd not installed and no apt-get: install Docker yourself"
    log "installing docker.io from the distribution (apt-get)"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null || die "apt-get install docker.io failed"
    log "docker.io installed in $((SECONDS - t0))s"
  fi
  if [ "$(id -u)" = 0 ]; then
    if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && have systemctl; then
      log "starting docker with systemctl"; systemctl start docker
    elif ! pgrep -x dockerd >/dev/null; then
      log "starting dockerd (log: /tmp/dockerd.log)"
      # in a session of its own (a kill of the caller's process group does not reach it) and at
      # normal CPU and I/O priority whatever the caller's (.ci/run calls this from a niced job;
      # dockerd's containers would inherit its priority); as root, so the nice can go down; with
      # no file descriptor of the caller's but the three (a caller's flock held on fd 3 or 9 would
      # otherwise be held by dockerd, and its lock never released, for as long as dockerd runs)
      (
        for fd in /proc/$BASHPID/fd/*; do
          fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        exec setsid -f nice -n "$((-$(nice)))" ionice -c2 -n4 dockerd >/tmp/dockerd.log 2>&1 </dev/null
      )
    fi
  fi
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || die "docker daemon not reachable (see /tmp/dockerd.log)"
fi
if offline_kit && [ -x "$KIND_OFFLINE_DIR/setup-docker-runtime.sh" ] && [ "$(id -u)" = 0 ]; then
  # it rewrites the runc wrapper docker runs: not while another lane of .ci/run does the same
  offline_lock "the Docker runtime setup"
  "$KIND_OFFLINE_DIR/setup-docker-runtime.sh" >&2
  offline_unlock
fi
log "docker $(docker version --format '{{.Server.Version}}') ready ($((SECONDS - t0))s)"
