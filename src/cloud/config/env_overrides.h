#pragma once
// Environment variables that override vsphere.conf (same names as the reference provider).
// A variable that is unset or empty changes nothing. Values are applied before defaults and
// inheritance, so a vCenter inherits an overridden Global value like one from the file.
//
// | Variable                                    | Overrides                                  |
// |---------------------------------------------|--------------------------------------------|
// | VSPHERE_VCENTER                             | Global server (adds that vCenter)           |
// | VSPHERE_VCENTER_PORT                        | Global port                                 |
// | VSPHERE_USER / VSPHERE_PASSWORD             | Global user / password                      |
// | VSPHERE_DATACENTER                          | Global datacenters (comma list)             |
// | VSPHERE_SECRET_NAME / VSPHERE_SECRET_NAMESPACE | Global secret-name / secret-namespace    |
// | VSPHERE_SECRETS_DIRECTORY                   | Global secrets-directory                    |
// | VSPHERE_ROUNDTRIP_COUNT                     | Global soap-roundtrip-count                 |
// | VSPHERE_INSECURE                            | Global insecure-flag (boolean)              |
// | VSPHERE_CAFILE / VSPHERE_THUMBPRINT         | Global ca-file / thumbprint                 |
// | VSPHERE_IP_FAMILY                           | Global ip-family ("ipv4", "ipv6,ipv4", ...) |
// | VSPHERE_API_DISABLE / VSPHERE_API_BINDING   | accepted, ignored (reference's CCM API)     |
// | VSPHERE_LABEL_REGION / VSPHERE_LABEL_ZONE   | Labels region / zone                        |
// | VSPHERE_NODES_INTERNAL_NETWORK_SUBNET_CIDR  | Nodes internal-network-subnet-cidr          |
// | VSPHERE_NODES_EXTERNAL_NETWORK_SUBNET_CIDR  | Nodes external-network-subnet-cidr          |
// | VSPHERE_NODES_INTERNAL_VM_NETWORK_NAME      | Nodes internal-vm-network-name              |
// | VSPHERE_NODES_EXTERNAL_VM_NETWORK_NAME      | Nodes external-vm-network-name              |
// | VSPHERE_NODES_EXCLUDE_INTERNAL_NETWORK_SUBNET_CIDR | Nodes exclude-internal-... (ours)    |
// | VSPHERE_NODES_EXCLUDE_EXTERNAL_NETWORK_SUBNET_CIDR | Nodes exclude-external-... (ours)    |
// | GLOBAL_MAX_SNAPSHOTS_PER_BLOCK_VOLUME       | Snapshot global-max-snapshots-per-block-... |
// | GRANULAR_MAX_SNAPSHOTS_PER_BLOCK_VOLUME_VSAN / _VVOL | Snapshot granular-max-...-vsan / -vvol |
// | VSPHERE_VCENTER_<ID>=<name>                 | adds/updates vCenter <name> (an address,    |
// |                                             | or a label when VCENTER_<ID>_SERVER is set) |
// | VCENTER_<ID>_SERVER / _PORT / _USERNAME / _PASSWORD / _INSECURE / _DATACENTERS /          |
// |   _ROUNDTRIP / _CAFILE / _THUMBPRINT / _SECRET_NAME / _SECRET_NAMESPACE / _IP_FAMILY       |
// |                                             | that vCenter's server, port, user, ...      |
//
// Fixed on purpose against the reference: a value containing '=' is kept whole (the reference
// split on every '=' and dropped such variables); VCENTER_<ID>_INSECURE and _ROUNDTRIP are
// applied when set (the reference's check was inverted, so they never were); a per-vCenter
// variable that is not set inherits from Global instead of resetting the vCenter's file values;
// VSPHERE_VCENTER_PORT is not mistaken for a vCenter with id "PORT"; an invalid boolean or
// number is an error naming the variable instead of a log line.
