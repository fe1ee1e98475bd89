#!/usr/bin/python3
"""Replays a captured progress-bar fixture (this folder) as its program wrote it: every line's
redraws (the pieces between carriage returns) one FRAME_SECONDS apart on a fixed schedule, so
that epochs take a known time, and the script's own epoch clock on stderr:
    CLOCK epoch=N seconds=S
from writing `Epoch N/z` to writing `Epoch N+1/z`, the last epoch to the end of the line after
its marker (its end-of-epoch line): what scalebench's epoch time measures; and
    WALL epoch=N begin=T end=T
the same instants on the wall clock, which ranks on one machine share.

Under mpirun (OMPI_COMM_WORLD_SIZE set) every rank replays and prints, as a training script
without a rank-0 guard does; the ranks start together on the next whole half second of the wall
clock and keep one schedule, as data-parallel ranks do in lock-step.

usage: replay.py FIXTURE [FRAME_SECONDS]   (default 0.03)
"""
import os
import re
import sys
import time

data = open(sys.argv[1], "rb").read()
frame = float(sys.argv[2]) if len(sys.argv) > 2 else 0.03
out = sys.stdout.buffer
marker = re.compile(rb"^Epoch (\d+)/(\d+)\r?$")

if "OMPI_COMM_WORLD_SIZE" in os.environ:
    start = (int(time.time() * 2) + 2) / 2.0
    time.sleep(max(0.0, start - time.time()))
t0 = time.perf_counter()
tick = 0


def wait_tick():
    global tick
    tick += 1
    time.sleep(max(0.0, t0 + tick * frame - time.perf_counter()))


starts = {}
walls = {}  # epoch -> wall-clock time this rank began it (ranks share the machine's clock)
last_end = None
last_end_wall = None
after_marker = None
lines = data.split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
for line in lines:
    m = marker.match(line)
    if m:
        epoch = int(m.group(1))
        starts[epoch] = time.perf_counter()
        walls[epoch] = time.time()
        after_marker = epoch
        out.write(line + b"\n")
        out.flush()
        wait_tick()
        continue
    pieces = line.split(b"\r")
    out.write(pieces[0])
    out.flush()
    for piece in pieces[1:]:
        wait_tick()
        out.write(b"\r" + piece)
        out.flush()
    out.write(b"\n")
    out.flush()
    if after_marker is not None and after_marker == max(starts):
        last_end = time.perf_counter()
        last_end_wall = time.time()
    after_marker = None
    wait_tick()

epochs = sorted(starts)
for i, epoch in enumerate(epochs):
    end = starts[epochs[i + 1]] if i + 1 < len(epochs) else last_end
    sys.stderr.write("CLOCK epoch=%d seconds=%.6f\n" % (epoch, end - starts[epoch]))
    # Wall-clock begin and end of this rank's epoch: with several ranks the run's epoch is from
    # the first rank's begin to the next epoch's first begin (the last: to the last rank's end).
    end_wall = walls[epochs[i + 1]] if i + 1 < len(epochs) else last_end_wall
    sys.stderr.write("WALL epoch=%d begin=%.6f end=%.6f\n" % (epoch, walls[epoch], end_wall))
sys.stderr.flush()
