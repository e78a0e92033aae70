#!/bin/sh
# Re-runs this bug's minimal model on its backends and prints the verdict.
exec '/work/main/build/bin/memo-fuzz' replay "$(dirname "$0")" "$@"
