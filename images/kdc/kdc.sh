#!/usr/bin/env bash
# The demo KDC's entrypoint (images/kdc).
#   kdc.sh serve                       writes krb5.conf and kdc.conf for $REALM (where
#                                      $KRB5_CONFIG and $KRB5_KDC_PROFILE point: the image sets
#                                      both in /var/lib/krb5kdc; else $KDC_DB), creates the
#                                      database when there is none, runs krb5kdc in the foreground
#                                      on port $KDC_PORT (tcp and udp)
#   kdc.sh keytab PRINCIPAL...         adds each principal that does not exist (random key) and
#                                      prints one keytab holding them all, base64 on one line.
#                                      The keys are not changed (ktadd -norandkey): run it again
#                                      and the keytabs handed out before stay valid.
#                                      Fails unless the keytab holds every principal.
# Environment: REALM (default EXAMPLE.COM), KDC_DB (default /var/lib/krb5kdc), KDC_PORT (default
# 8888: not root), MAX_LIFE (ticket lifetime, default 10h), MAX_RENEW (default 7d).
set -euo pipefail
REALM=${REALM:-EXAMPLE.COM}
DB=${KDC_DB:-/var/lib/krb5kdc}
PORT=${KDC_PORT:-8888}
export KRB5_CONFIG=${KRB5_CONFIG:-$DB/krb5.conf} KRB5_KDC_PROFILE=${KRB5_KDC_PROFILE:-$DB/kdc.conf}
die() { echo "kdc.sh: $*" >&2; exit 2; }

configure() {
  mkdir -p "$DB"
  cat >"$KRB5_CONFIG" <<CONF
[libdefaults]
  default_realm = $REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
[realms]
  $REALM = {
    kdc = 127.0.0.1:$PORT
  }
CONF
  cat >"$KRB5_KDC_PROFILE" <<CONF
[kdcdefaults]
  kdc_ports = $PORT
  kdc_tcp_ports = $PORT
[realms]
  $REALM = {
    database_name = $DB/principal
    key_stash_file = $DB/stash
    acl_file = $DB/kadm5.acl
    max_life = ${MAX_LIFE:-10h}
    max_renewable_life = ${MAX_RENEW:-7d}
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = STDERR
CONF
  : >"$DB/kadm5.acl"
}

case "${1:-serve}" in
  serve)
    configure
    if [ ! -f "$DB/principal" ]; then
      # the master key is never needed again: the stash file holds it
      kdb5_util create -s -r "$REALM" -P "$(head -c 24 /dev/urandom | base64)" >/dev/null
      echo "kdc.sh: realm $REALM created in $DB" >&2
    fi
    echo "kdc.sh: krb5kdc for $REALM on port $PORT (tcp, udp)" >&2
    exec krb5kdc -n ;;
  keytab)
    shift
    [ $# -ge 1 ] || die "usage: kdc.sh keytab PRINCIPAL..."
    out=$(mktemp -d)/k.keytab
    trap 'rm -rf "$(dirname "$out")"' EXIT
    for p in "$@"; do
      if ! kadmin.local -p kdc/admin -q "getprinc $p" 2>/dev/null | grep -q '^Principal:'; then
        kadmin.local -p kdc/admin -q "addprinc -randkey $p" >/dev/null
      fi
      kadmin.local -p kdc/admin -q "ktadd -norandkey -k $out $p" >/dev/null
      kadmin.local -p kdc/admin -q "getprinc $p" 2>/dev/null | grep -q '^Principal:' || die "principal $p was not created"
    done
    # kadmin.local exits 0 when a query fails: check that the keytab holds every principal
    for p in "$@"; do
      klist -k "$out" 2>/dev/null | awk '{print $2}' | grep -qxF "$p" || die "keytab lacks $p"
    done
    base64 -w0 "$out"
    rm -rf "$(dirname "$out")" ;;
  *)
    exec "$@" ;;
esac
