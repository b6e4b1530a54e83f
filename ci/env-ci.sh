#!/usr/bin/env bash
# Write-audit-publish CI for floe on Iceberg branches (docs/envs.md, "CI").
#
#   FLOE_CI_ENV=pr_123 [FLOE_CI_SELECT='state:modified+'] [FLOE_CI_PUBLISH=1] \
#     ci/env-ci.sh [extra dbt build arguments, e.g. --state prod-artifacts]
#
# 1. write:   a fresh environment (a re-run of the job starts over), and
#             `dbt build` of the selection into it: every rebuilt table writes its
#             branch env_<name>, everything else is read from main (zero-copy defer);
# 2. audit:   the data tests of that build run against the branches; a failure stops
#             here with main untouched (the environment stays for inspection);
# 3. diff:    rows added/removed/changed per changed table, into $FLOE_CI_DIFF;
# 4. publish: with FLOE_CI_PUBLISH=1 (the main-branch job), main of every changed table
#             is fast-forwarded to its branch under the writer lock; otherwise the
#             environment is dropped (pull-request jobs only report).
# Tested by tests/envs/test_ci_script.py.
set -euo pipefail

name="${FLOE_CI_ENV:?set FLOE_CI_ENV to the environment name (letters, digits, _), e.g. pr_123}"
select="${FLOE_CI_SELECT:-state:modified+}"
diff_out="${FLOE_CI_DIFF:-env-diff.txt}"
floe="${FLOE_BIN:-floe}"
dbt="${DBT_BIN:-dbt}"

if "$floe" env status "$name" >/dev/null 2>&1; then
    "$floe" env drop "$name"
fi
"$floe" env create "$name"

if ! FLOE_ENV="$name" "$dbt" build --select "$select" "$@"; then
    echo "env-ci: build or audit failed; main is untouched. Inspect with" \
        "FLOE_ENV=$name dbt show, then: $floe env drop $name" >&2
    exit 1
fi

"$floe" env diff "$name" ${FLOE_CI_MANIFEST:+--manifest "$FLOE_CI_MANIFEST"} | tee "$diff_out"

if [ "${FLOE_CI_PUBLISH:-0}" = "1" ]; then
    "$floe" env publish "$name"
else
    "$floe" env drop "$name"
fi
