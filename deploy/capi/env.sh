# The real-providers profile's environment for a script that drives its stack from outside
# (tests/capi.sh, tests/capicompare.sh): sourced from the repository's root, not run.
export TOPOFLOW_STACK=capi
# A directory inherited from another stack's env file (tests/run.sh sources the test stack's) is
# not this stack's.
unset TOPOFLOW_STACK_DIR
source deploy/stack/lib.sh
source deploy/capi/lib.sh
