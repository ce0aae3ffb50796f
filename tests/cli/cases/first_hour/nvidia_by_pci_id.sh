# A registry target is planned as runnable only on its own device: an H100
# (sm 90, PCI id 0x2330) runs h100 and skips h200 (also sm 90) with the
# reason; a GPU whose PCI id is unknown runs neither. The host is the
# PREWARM_HOST_DEVICES test double (host/host_description_file.hpp).
cat >h100.json <<'JSON'
[ {"description": "test H100", "vendor": "nvidia", "nvidia.sm": "90", "pci-id": "0x2330", "nvidia.driver": "580.95.05"} ]
JSON
cat >no-pci.json <<'JSON'
[ {"description": "test sm 90 GPU without a PCI id", "vendor": "nvidia", "nvidia.sm": "90"} ]
JSON
targets() { PREWARM_HOST_DEVICES=$1 "$PREWARM" targets 2>&1 | grep -E '^(prewarm: warning|h100|h200|a100) ' | sed -E 's/  +/  /g'; }
targets h100.json
targets no-pci.json
