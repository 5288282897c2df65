set -u
export PATH=$PATH:/usr/local/cuda/bin
b=/tmp/mwc2
STEPS=build BUILD_DIR=$b bash models/cuda/profile.sh /tmp/prof2 >/dev/null 2>&1; cp /tmp/prof2/log.txt $OUT/build-log.txt
cuobjdump -sass $b/memwall-cuda | awk '/Function :.*combine/ { p = 1 } /Function :/ && !/combine/ { p = 0 } p' > /tmp/sass-combine.txt
grep -c "" /tmp/sass-combine.txt
GIT_COMMIT=$(git rev-parse HEAD 2>/dev/null || echo "$COMMIT") EXE=$b/memwall-cuda timeout 420 models/cuda/variants.sh /tmp/var 2>&1 | tail -25
cp /tmp/var/* $OUT/; gzip -c /tmp/sass-combine.txt > $OUT/sass-combine.txt.gz
