#!/usr/bin/env sh
# Makes what every node of a fleet must share (docs/scale-out.md), once, into this directory (or
# the one given): the vault key and the PostgreSQL password (platform.env, postgres.env), and the
# audit checkpoint and backup signing keys (Ed25519, PKCS#8 PEM). The licence (licence.jwt,
# licence-public.pem) comes from your vendor: copy it here. Existing files are never overwritten:
# replacing a fleet's key is a rotation (docs/scale-out.md), not a re-run of this script.
set -eu
dir="${1:-$(dirname "$0")}"
mkdir -p "$dir"
umask 077
make_key() {
  [ -e "$dir/$1" ] && { echo "kept $dir/$1"; return; }
  openssl genpkey -algorithm ed25519 -out "$dir/$1"
  echo "made $dir/$1"
}
make_key audit-checkpoint-key.pem
make_key backup-signing-key.pem
if [ -e "$dir/platform.env" ]; then
  echo "kept $dir/platform.env"
else
  password="$(openssl rand -hex 24)"
  printf 'AP_VAULT_KEY=%s\nAP_POSTGRES_PASSWORD=%s\n' "$(openssl rand -base64 32)" "$password" > "$dir/platform.env"
  printf 'POSTGRES_PASSWORD=%s\n' "$password" > "$dir/postgres.env"
  echo "made $dir/platform.env and $dir/postgres.env"
fi
[ -e "$dir/licence.jwt" ] || echo "now copy your licence.jwt and licence-public.pem into $dir"
