#!/usr/bin/python3
"""Prints what Hugging Face's Trainer prints with logging and evaluation per epoch: a train log
dict and an eval dict at each epoch's end (`'epoch': N.0`), then the run summary. Its own clock
on stderr, `CLOCK epoch=N seconds=S`, from the previous epoch's end (epoch 1: from its start).

With `per-step` (Trainer's default logging_strategy "steps"): three train log dicts inside each
epoch at fractional epochs (`'epoch': 0.17`, 0.5, 0.83; loss 0.7/N - 0.01 k), and only the eval
dict at the epoch's end. Each epoch's loss is then its last step log's, 0.7/N - 0.03."""
import sys
import time

per_step = len(sys.argv) > 1 and sys.argv[1] == "per-step"
previous = time.perf_counter()
for epoch in range(1, 4):
    if per_step:
        for k in range(1, 4):
            time.sleep(0.1)
            print({'loss': round(0.7 / epoch - 0.01 * k, 4), 'grad_norm': 1.1,
                   'learning_rate': 5e-05 / epoch, 'epoch': round(epoch - 1 + (k - 0.5) / 3, 2)},
                  flush=True)
    else:
        time.sleep(0.3)
        print({'loss': round(0.7 / epoch, 4), 'grad_norm': 1.1, 'learning_rate': 5e-05 / epoch,
               'epoch': float(epoch)}, flush=True)
    print({'eval_loss': round(0.6 / epoch, 4), 'eval_accuracy': 0.7 + 0.05 * epoch,
           'eval_runtime': 0.01, 'epoch': float(epoch)}, flush=True)
    now = time.perf_counter()
    sys.stderr.write("CLOCK epoch=%d seconds=%.6f\n" % (epoch, now - previous))
    sys.stderr.flush()
    previous = now
print({'train_runtime': 0.9, 'train_samples_per_second': 800.0, 'epoch': 3.0}, flush=True)
