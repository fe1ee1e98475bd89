#!/usr/bin/python3
"""Writes what PyTorch Lightning's TQDMProgressBar writes into a pipe (the byte structure of
../progress/lightning-tqdmprogressbar-pipe.out): a sanity check bar, then per epoch the training
bar redrawn with \\r (0-based `Epoch N:`), a newline when the validation bar opens below it, the
validation redraws each ending in ESC[A, and the validation bar cleared before the training bar
is redrawn with the validation metrics, on the line where the next epoch's bar then runs. Its own
clock on stderr, `CLOCK epoch=N seconds=S` (1-based): from the first byte of the epoch's line to
the first byte of the next one's (the last to the end of its validation)."""
import sys
import time

out = sys.stdout
frame = 0.04


def write(text):
    out.write(text)
    out.flush()


start = time.perf_counter()
write("\rSanity Checking: |          | 0/? [00:00<?, ?it/s]")
time.sleep(frame)
starts = []
for epoch in range(3):
    if epoch > 0:
        # The validation bar cleared, the training bar redrawn with the validation metrics: the
        # first bytes of this epoch's line.
        starts.append(time.perf_counter())
        write("\r" + " " * 70 + "\x1b[A\rEpoch %d: 100%%|##########| 6/6 [00:00<00:00, 19.7it/s, "
              "v_num=0, train_loss=%.3f, val_loss=0.800, val_acc=%.2f]" % (epoch - 1, loss, acc))
    else:
        starts.append(start)
    # The postfix keeps the last validation's metrics while this epoch trains (as Lightning's).
    val = "" if epoch == 0 else ", val_loss=0.800, val_acc=%.2f" % acc
    loss = 0.5 / (epoch + 1)
    acc = 0.6 + 0.1 * epoch
    for step in range(7):
        write("\rEpoch %d: %3d%%|          | %d/6 [00:00<00:00, 19.7it/s, v_num=0%s]"
              % (epoch, 100 * step // 6, step, val))
        time.sleep(frame)
    write("\rEpoch %d: 100%%|##########| 6/6 [00:00<00:00, 19.7it/s, v_num=0, train_loss=%.3f%s]"
          % (epoch, loss, val))
    write("\n")  # the validation bar opens on the next line
    for step in range(3):
        write("\rValidation DataLoader 0: %3d%%|          | %d/2 [00:00<00:00, 19.8it/s]\x1b[A\n"
              % (50 * step, step))
        time.sleep(frame)
end = time.perf_counter()
write("\r" + " " * 70 + "\x1b[A\rEpoch 2: 100%%|##########| 6/6 [00:00<00:00, 19.7it/s, v_num=0, "
      "train_loss=%.3f, val_loss=0.800, val_acc=%.2f]\n" % (loss, acc))
sys.stderr.write("`Trainer.fit` stopped: `max_epochs=3` reached.\n")
starts.append(end)
for i in range(3):
    sys.stderr.write("CLOCK epoch=%d seconds=%.6f\n" % (i + 1, starts[i + 1] - starts[i]))
sys.stderr.flush()
