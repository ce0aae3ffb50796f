# SPDX-License-Identifier: Apache-2.0
# Sourced by the container tests (container_test.sh, your_image_test.sh):
# keeps buildah's storage from growing run after run. With the vfs driver
# every layer is a full copy of the root file system (~1 GB here), and two
# things used to pile up until a later build failed with "no space left on
# device":
#   - working containers buildah 1.28 leaves behind (`FROM image AS stage`
#     used only by COPY --from keeps a "<image>-working-container"; a killed
#     build keeps its own), each pinning its image;
#   - the previous run's images: a new build moves the tag, the old image
#     and its cache layers stay, untagged.
# storage_begin records the containers that exist before the test; the
# storage_end trap removes every container made since, plus those an earlier,
# killed run of these tests left (their names start with prewarm- or
# warm-demo), then prunes untagged images no tagged image builds on: the
# current images and their cache layers stay (the next run is warm), older
# versions go.
# Needs: bah (buildah with the test's global options) and say.

storage_containers_before=""

storage_containers() {
  bah containers --noheading --format '{{.ContainerID}} {{.ContainerName}}' 2>/dev/null
}

storage_begin() {
  storage_containers_before=$(storage_containers | cut -d' ' -f1)
}

storage_end() {
  local id name removed=0
  while read -r id name; do
    [ -n "$id" ] || continue
    case "$name" in
      prewarm-* | warm-demo*) ;;
      *) grep -qx -- "$id" <<<"$storage_containers_before" && continue ;;
    esac
    bah rm "$id" >/dev/null 2>&1 && removed=$((removed + 1))
  done < <(storage_containers)
  bah rmi --prune >/dev/null 2>&1
  say "storage: removed $removed working container(s) and the untagged images no tagged image uses"
}
