#!/usr/bin/env bash
# Keeps the repository lean: fails when a tracked file is larger than 1 MiB
# (test models are made by committed scripts; build outputs and benchmark
# models stay out) or when a tracked path has a component starting with '-'
# (the mark of a tool that took an option for an output folder).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
limit=$((1024 * 1024))
status=0
while IFS= read -r -d '' path; do
  [[ -f "$path" ]] || continue
  size=$(stat -c %s -- "$path")
  if (( size > limit )); then
    echo "check-repository: $path is $size bytes (limit $limit): make it with a committed script instead" >&2
    status=1
  fi
  if [[ "/$path" == */-* ]]; then
    echo "check-repository: $path: a path component starts with '-'" >&2
    status=1
  fi
done < <(git ls-files -z)
exit $status
