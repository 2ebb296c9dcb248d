#!/usr/bin/env bash
# The demo KDC's entrypoint (images/kdc).
#   kdc.sh serve                       writes krb5.conf and kdc.conf for $REALM, creates the
#                                      database when there is none, runs krb5kdc in the foreground
#   kdc.sh keytab PRINCIPAL...         adds each principal that does not exist (random key) and
#                                      prints one keytab holding them all, base64 on one line.
#                                      The keys are not changed (ktadd -norandkey): run it again
#                                      and the keytabs handed out before stay valid.
# Environment: REALM (default EXAMPLE.COM), KDC_DB (default /var/lib/krb5kdc), MAX_LIFE (ticket
# lifetime, default 10h), MAX_RENEW (default 7d).
set -euo pipefail
REALM=${REALM:-EXAMPLE.COM}
DB=${KDC_DB:-/var/lib/krb5kdc}
die() { echo "kdc.sh: $*" >&2; exit 2; }

configure() {
  mkdir -p "$DB" /etc/krb5kdc
  cat >/etc/krb5.conf <<CONF
[libdefaults]
  default_realm = $REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
[realms]
  $REALM = {
    kdc = 127.0.0.1:88
  }
CONF
  cat >/etc/krb5kdc/kdc.conf <<CONF
[kdcdefaults]
  kdc_ports = 88
  kdc_tcp_ports = 88
[realms]
  $REALM = {
    database_name = $DB/principal
    key_stash_file = $DB/stash
    acl_file = /etc/krb5kdc/kadm5.acl
    max_life = ${MAX_LIFE:-10h}
    max_renewable_life = ${MAX_RENEW:-7d}
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = STDERR
CONF
  : >/etc/krb5kdc/kadm5.acl
}

case "${1:-serve}" in
  serve)
    configure
    if [ ! -f "$DB/principal" ]; then
      # the master key is never needed again: the stash file holds it
      kdb5_util create -s -r "$REALM" -P "$(head -c 24 /dev/urandom | base64)" >/dev/null
      echo "kdc.sh: realm $REALM created in $DB" >&2
    fi
    echo "kdc.sh: krb5kdc for $REALM on port 88 (tcp, udp)" >&2
    exec krb5kdc -n ;;
  keytab)
    shift
    [ $# -ge 1 ] || die "usage: kdc.sh keytab PRINCIPAL..."
    out=$(mktemp -d)/k.keytab
    for p in "$@"; do
      if ! kadmin.local -q "getprinc $p" 2>/dev/null | grep -q '^Principal:'; then
        kadmin.local -q "addprinc -randkey $p" >/dev/null
      fi
      kadmin.local -q "ktadd -norandkey -k $out $p" >/dev/null
      kadmin.local -q "getprinc $p" 2>/dev/null | grep -q '^Principal:' || die "principal $p was not created"
    done
    base64 -w0 "$out"
    rm -rf "$(dirname "$out")" ;;
  *)
    exec "$@" ;;
esac
