#!/usr/bin/env bash
# Takes retry-core's API baseline: builds retry-core from the working tree and stores its classes as
# retry-core/api-baseline/retry-core.jar, the jar the japicmp check in verify compares against
# (docs/releasing.md). Commit the new jar together with the API change it accepts.
set -euo pipefail
cd "$(dirname "$0")/../.."
./mvnw -B -q -pl retry-core -am package -DskipTests -Djapicmp.skip=true -Dpublish.skip=true
mkdir -p retry-core/api-baseline
rm -f retry-core/api-baseline/retry-core.jar
# Classes only (no resources, no timestamps that change between builds): the API is all japicmp reads.
jar --create --date=1980-01-01T00:00:02Z --file retry-core/api-baseline/retry-core.jar \
  -C retry-core/target/classes io
echo "retry-core/api-baseline/retry-core.jar: $(unzip -l retry-core/api-baseline/retry-core.jar | tail -1)"
