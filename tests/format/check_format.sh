#!/usr/bin/env bash
# Every tracked C++ file passes the repository's .clang-format (clang-format 14, Debian's
# clang-format package). Prints each file that does not, with the command that fixes it; exit 1
# then. Run from anywhere in the checkout: tests/format/check_format.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "check_format: clang-format not found (apt-get install clang-format)" >&2
  exit 2
fi
bad=()
while IFS= read -r f; do
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cc' '*.h')
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: %d file(s) do not pass .clang-format:\n' "${#bad[@]}"
  printf '  %s\n' "${bad[@]}"
  echo "fix with: $fmt -i ${bad[*]}"
  exit 1
fi
echo "check_format: $(git ls-files '*.cc' '*.h' | wc -l) C++ files pass .clang-format"
