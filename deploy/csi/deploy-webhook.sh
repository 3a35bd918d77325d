#!/usr/bin/env bash
# Installs the CSI driver's validating admission webhook (manifests/vsphere-csi-webhook.yaml):
# makes a CA and a serving certificate for vsphere-webhook-svc.<namespace>.svc with openssl,
# stores them with the webhook's config in the Secret vsphere-webhook-certs (the reference's
# name and layout: webhook.config, tls.crt, tls.key), and applies the manifest with the CA as
# the webhook's caBundle. Run it again to rotate the certificate: the webhook reloads it.
#   deploy/csi/deploy-webhook.sh [--namespace vmware-system-csi] [--days 3650]
set -euo pipefail
namespace=vmware-system-csi
days=3650
while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) namespace=$2; shift 2 ;;
    --days) days=$2; shift 2 ;;
    *) echo "usage: $0 [--namespace NS] [--days N]" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")/../.." && pwd)
service=vsphere-webhook-svc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=vsphere-webhook-ca" \
  -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=${service}.${namespace}.svc" \
  -keyout "$tmp/tls.key" -out "$tmp/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:%s,DNS:%s.%s,DNS:%s.%s.svc\nextendedKeyUsage=serverAuth\n' \
  "$service" "$service" "$namespace" "$service" "$namespace" > "$tmp/ext"
openssl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
  -days "$days" -extfile "$tmp/ext" -out "$tmp/tls.crt" 2>/dev/null
cat > "$tmp/webhook.config" <<EOC
[WebHookConfig]
port = "8443"
cert-file = "/run/secrets/tls/tls.crt"
key-file = "/run/secrets/tls/tls.key"
EOC
kubectl create secret generic vsphere-webhook-certs --namespace "$namespace" \
  --from-file=webhook.config="$tmp/webhook.config" --from-file=tls.crt="$tmp/tls.crt" \
  --from-file=tls.key="$tmp/tls.key" --dry-run=client -o yaml | kubectl apply -f -
ca_bundle=$(base64 -w0 < "$tmp/ca.crt")
sed -e "s|\${CA_BUNDLE}|${ca_bundle}|" -e "s|namespace: vmware-system-csi|namespace: ${namespace}|" \
  "$here/manifests/vsphere-csi-webhook.yaml" | kubectl apply -f -
