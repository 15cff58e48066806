#!/usr/bin/env bash
# Checks that every unchecked declaration in Sources/ (`@exclusivity(unchecked)`, `@unchecked
# Sendable`) has a reason beside it: a `//` comment on the line directly above (the last line of
# a comment block counts; a `///` doc comment does not), or a `//` comment at the end of its own
# line. Prints each one without a reason as file:line and exits 1; otherwise prints how many
# there are.
#
#   scripts/check-unchecked.sh
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(find Sources -name '*.swift' -print0 | sort -z)
[ ${#files[@]} -gt 0 ] || { echo "no Swift files in Sources/" >&2; exit 1; }
awk '
    FNR == 1 { previous = "" }
    {
        line = $0
        stripped = line
        sub(/^[ \t]+/, "", stripped)
        # Only declarations: a comment that mentions the attribute is not one.
        if (stripped !~ /^\/\// && (line ~ /@exclusivity\(unchecked\)/ || line ~ /@unchecked[ \t]+Sendable/)) {
            total++
            above = previous
            sub(/^[ \t]+/, "", above)
            reason_above = above ~ /^\/\// && above !~ /^\/\/\//
            rest = line
            sub(/.*(@exclusivity\(unchecked\)|@unchecked[ \t]+Sendable)/, "", rest)
            reason_beside = rest ~ /[ \t]\/\/[^\/]/
            if (!reason_above && !reason_beside) {
                print FILENAME ":" FNR ": no reason beside it: " stripped
                missing++
            }
        }
        previous = line
    }
    END {
        if (missing > 0) {
            print missing " of " total " unchecked declarations have no reason beside them" > "/dev/stderr"
            exit 1
        }
        print total " unchecked declarations, each with a reason beside it"
    }
' "${files[@]}"
