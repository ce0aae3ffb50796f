# A manifest target naming a key profile: every error names the manifest's
# FILE:LINE:COLUMN and field, or the profile's own line, at plan time
# (exit 2), before any job.
manifest() { # TARGETS-LINE
  printf 'version: 1\nmodels:\n  - name: gptq\n    preset: gptq-linear\nprecisions: [fp32]\n%s\n' "$1" > m.yaml
}
plan() { "$PREWARM" plan m.yaml > /dev/null 2> err.txt; echo "exit $?" >> err.txt; sed "s|$PWD/||g" err.txt >&2; }
profile() { # TARGET DEVICE-ID -> a minimal valid profile (the format of prewarm/manifest/intel_profile.hpp)
  cat <<YAML
version: 1
target: $1
recorder: {product: bmg, device_id: "$2"}
driver: {packages: {}, source: "test"}
key:
  device_id: {value: "$2", source: "test"}
  revision: {value: "0x00", source: "test"}
  ip_version: {value: "20.1.0", source: "test"}
  feature_table: {value: virtual-device, source: "test"}
  workaround_table: {value: virtual-device, source: "test"}
opencl:
  bindless: {value: false, source: "test"}
  extensions: {add: []}
level_zero:
  bindless: {value: true, source: "test"}
device_name: {value: "Intel(R) Arc(TM) B580 Graphics", source: "test"}
YAML
}
profile arc-b580 0xe20b > b580.yaml
profile arc-a770 0x56a0 > a770.yaml
profile arc-b580 0x56a0 > wrong-id.yaml
sed 's/revision: {value: "0x00"/revision: {value: "0"/' b580.yaml > bad.yaml
manifest 'targets: [{name: arc-b580, profile: b580.yaml}]'; "$PREWARM" plan m.yaml > /dev/null && echo "a valid profile plans" >&2
manifest 'targets: [{name: arc-b580, profile: missing.yaml}]'; plan
manifest 'targets: [{name: cpu, profile: b580.yaml}]'; plan
manifest 'targets: [{name: arc-b580, profile: a770.yaml}]'; plan
manifest 'targets: [{name: arc-b580, profile: wrong-id.yaml}]'; plan
manifest 'targets: [{name: arc-b580, profile: bad.yaml}]'; plan
manifest 'targets: [arc-b580, {name: arc-b580, profile: b580.yaml}]'; plan
manifest 'targets: [{name: arc-b580, profil: b580.yaml}]'; plan
