#!/usr/bin/python3
"""Prints what pytorch/examples mnist/main.py prints (its own format strings), on a schedule:
per epoch two `Train Epoch:` log lines and the `Test set:` line after a short test pass. Its own
epoch clock goes to stderr as `CLOCK epoch=N seconds=S` (from its first log line, where
scalebench's pytorch-examples form starts the epoch, to its `Test set:` line)."""
import sys
import time

for epoch in range(1, 4):
    start = time.perf_counter()
    for batch_idx, loss in ((0, 2.3 / epoch), (10, 1.5 / epoch)):
        print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
            epoch, batch_idx * 64, 640, 100. * batch_idx / 10, loss), flush=True)
        time.sleep(0.15)
    time.sleep(0.05)  # the test pass
    correct = 9000 + 300 * epoch
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        0.1 / epoch, correct, 10000, 100. * correct / 10000), flush=True)
    sys.stderr.write("CLOCK epoch=%d seconds=%.6f\n" % (epoch, time.perf_counter() - start))
    sys.stderr.flush()
