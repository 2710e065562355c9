#!/usr/bin/env bash
# Shows that scripts/release/CheckPublication.java fails when it should: on a copy of the reactor's
# poms it must pass as they are, and fail on a published module missing from retry-bom, on an
# unpublished module listed there, and on a flattened POM with an unresolved property or no url.
# Needs retry-bom/target/.flattened-pom.xml (./mvnw -B -q -pl retry-bom verify).
set -euo pipefail
cd "$(dirname "$0")/../.."
check=$PWD/scripts/release/CheckPublication.java
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
for pom in $(git ls-files '*pom.xml'); do
  mkdir -p "$tree/$(dirname "$pom")"
  cp "$pom" "$tree/$pom"
done
mkdir -p "$tree/retry-bom/target" "$tree/retry-starter/target"
cp retry-bom/target/.flattened-pom.xml "$tree/retry-bom/target/"
sed 's#<artifactId>retry-bom</artifactId>#<artifactId>retry-starter</artifactId>#' \
  retry-bom/target/.flattened-pom.xml > "$tree/retry-starter/target/.flattened-pom.xml"

expect() { # expect PASS|FAIL description args...
  local want=$1 what=$2; shift 2
  if java "$check" "$@" >/dev/null 2>&1; then got=PASS; else got=FAIL; fi
  if [[ $got != "$want" ]]; then echo "selftest: $what: expected $want, got $got" >&2; exit 1; fi
  echo "selftest: $what: $got as expected"
}
expect PASS "the reactor as it is" bom "$tree" "$tree/retry-bom"
expect PASS "a published module's flattened POM" module "$tree" "$tree/retry-starter"

cp "$tree/retry-bom/pom.xml" "$tree/bom.orig"
sed -i '0,/<artifactId>retry-starter<\/artifactId>/s##<artifactId>sample-app</artifactId>#' "$tree/retry-bom/pom.xml"
expect FAIL "retry-starter missing, sample-app listed" bom "$tree" "$tree/retry-bom"
expect FAIL "a module missing from the BOM" module "$tree" "$tree/retry-starter"
cp "$tree/bom.orig" "$tree/retry-bom/pom.xml"

sed -i '0,/<version>[^$<]*<\/version>/s##<version>${revision}</version>#' "$tree/retry-starter/target/.flattened-pom.xml"
expect FAIL "an unresolved property in a flattened POM" module "$tree" "$tree/retry-starter"
sed 's#<artifactId>retry-bom</artifactId>#<artifactId>retry-starter</artifactId>#; /<url>/d' \
  retry-bom/target/.flattened-pom.xml > "$tree/retry-starter/target/.flattened-pom.xml"
expect FAIL "a flattened POM without url" module "$tree" "$tree/retry-starter"
