# shellcheck shell=bash
# Sourced first by the bench scripts, with their arguments and $here set: the build folder (the
# first argument, default ../build), the trainer in it, the Python that has torch, and ROUNDS.
build=${1:-$here/../build}
train=$build/scalebench-train
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-5}
