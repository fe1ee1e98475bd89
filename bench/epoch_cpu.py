#!/usr/bin/python3
"""Runs a scalebench-train command and prints, for every epoch, the CPU seconds the process
used (user + system, from /proc/PID/stat) and the wall seconds, as `cpu/wall` pairs on one line:

    1.11/1.22 0.78/0.81 0.77/0.77

The trainer's own images/s is wall time, which other work on a shared machine moves by 2x and
more; its CPU time moves far less (with OMP_WAIT_POLICY=passive, so that waiting OpenMP threads
sleep instead of spinning), which makes it the figure for comparing two builds of the trainer
(bench/trainer_ab.sh). Clock ticks are 10 ms: use epochs of a second or more.

usage: bench/epoch_cpu.py scalebench-train [OPTIONS...]
"""
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)

    def cpu_seconds():
        # Fields after the command name: utime and stime are the 12th and 13th.
        fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    cpu, wall, epochs = cpu_seconds(), time.perf_counter(), []
    for line in proc.stdout:
        if line.startswith("Epoch 1/"):  # model built, data loaded: epoch 1 starts here
            cpu, wall = cpu_seconds(), time.perf_counter()
        elif "images/s:" in line:  # the end of an epoch
            now_cpu, now_wall = cpu_seconds(), time.perf_counter()
            epochs.append((now_cpu - cpu, now_wall - wall))
            cpu, wall = now_cpu, now_wall
    if proc.wait() != 0:
        sys.exit(f"epoch_cpu.py: the trainer exited with {proc.returncode}")
    print(" ".join(f"{c:.2f}/{w:.2f}" for c, w in epochs))


if __name__ == "__main__":
    main()
