# Shards I/N are disjoint and together give every job, in the same order.
cat >m.yaml <<'YAML'
version: 1
models:
  - name: qwen
    preset: qwen2.5-0.5b
  - name: plates
    preset: lprnet
precisions: [fp32, fp16, int8]
targets: [cpu, arc-a770, dg1]
YAML
ids() { "$PREWARM" plan m.yaml --json "$@" | python3 -c 'import json,sys; print("\n".join(j["id"] for j in json.load(sys.stdin)["jobs"]))'; }
ids >all.txt
for i in 1 2 3 4; do ids --shard $i/4 >"shard$i.txt"; done
sort all.txt >all.sorted
cat shard1.txt shard2.txt shard3.txt shard4.txt | sort >union.sorted
cmp -s all.sorted union.sorted && echo "union = all"
[ "$(cat shard*.txt | sort | uniq -d | wc -l)" = 0 ] && echo "disjoint"
wc -l <all.txt
cat shard2.txt
