"$PREWARM" targets --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
by = {t["name"]: t for t in doc["targets"]}
print(by["arc-a380"]["ocloc_device"], by["arc-a380"]["pci_ids"], by["arc-a380"]["host"]["strategy"])
print(by["h200"]["sm"], by["h200"]["pci_ids"], by["h200"]["host"]["strategy"])
print(by["cpu"]["host"]["strategy"])
'
