# Sourced by the test/hsa scripts after test/mp/common.sh: finds the SDMA
# engine model and the test program, or skips (77).
#   hsa_model PROG   sets MODEL (absolute path of libhsamodel.so), PROG
#                    ($top_builddir/test/hsa/PROG, or empty for none) and
#                    HSA (the environment that runs a job over the model).
hsa_model() {
    MODEL=$top_builddir/test/hsa/.libs/libhsamodel.so
    PROG=${1:+$top_builddir/test/hsa/$1}
    if [ ! -f "$MODEL" ] || { [ -n "$PROG" ] && [ ! -x "$PROG" ]; }; then
        echo "SKIP: the engine model${1:+ or test/hsa/$1} is not built"
        exit 77
    fi
    MODEL=$(cd "$(dirname "$MODEL")" && pwd)/$(basename "$MODEL")
    HSA="SHMEM_SDMA_BACKEND=hsa SHMEM_HSA_LIBRARY=$MODEL"
}
