#!/usr/bin/python3
"""Prints what training scripts print, on a fixed schedule, on every rank of whatever launched it
(plain, mpirun, torchrun): the byte structure of the forms, each write flushed as the real code
does, and the script's own clock. Issue 34's acceptance (tests/cli/test_launchers_cli.cpp).

usage: replay_forms.py MODE
  tqdm-stdout, tqdm-stderr  a tqdm bar per epoch (`\\rEpoch N/3:  12%|#  | 1/8 [...]` redrawn,
                            a newline at its close) on that stream, every rank; then
                            `epoch N done` on stdout
  lightning                 Lightning's TQDMProgressBar on stdout (rank 0 only, as Lightning
                            does), `Trainer.fit` stopped on stderr, then a trainer.test()
  keras                     Keras 2 `fit(verbose=2)` lines on stdout, every rank

The clock, on stderr at the end, per rank: `WALL epoch=N begin=T end=T` (wall-clock seconds,
which ranks on one machine share): from the first byte of the epoch's start line to the first
byte of the next one's; the last epoch to its end (the bar's newline, the end-of-epoch line,
fit's end line). Ranks start together on the next whole half second and keep one schedule, as
data-parallel ranks do in lock-step.
"""
import os
import sys
import time

MODE = sys.argv[1]
EPOCHS, FRAMES, FRAME = 3, 8, 0.05
rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
size = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
start = (int(time.time() * 2) + 2) / 2.0 if size > 1 else time.time() + 0.05
tick = 0


def wait_tick():
    """Sleeps to the next point of the shared schedule."""
    global tick
    tick += 1
    time.sleep(max(0.0, start + tick * FRAME - time.time()))


def write(stream, text):
    stream.write(text)
    stream.flush()


begins, ends = {}, {}
time.sleep(max(0.0, start - time.time()))

if MODE.startswith("tqdm"):
    bar = sys.stderr if MODE == "tqdm-stderr" else sys.stdout
    for epoch in range(1, EPOCHS + 1):
        begins[epoch] = time.time()
        for step in range(FRAMES + 1):
            done = "#" * step + " " * (FRAMES - step)
            write(bar, "\rEpoch %d/%d: %3d%%|%s| %d/%d [00:00<00:00, 19.7it/s, loss=%.3f]"
                  % (epoch, EPOCHS, 100 * step // FRAMES, done, step, FRAMES, 0.5 / epoch))
            wait_tick()
        ends[epoch] = time.time()
        write(bar, "\n")
        write(sys.stdout, "epoch %d done\n" % epoch)
elif MODE == "lightning":
    shown = rank == 0  # Lightning's bar is rank 0's only
    out = sys.stdout if shown else open(os.devnull, "w")
    # The sanity check's bar shares the first epoch's line (no newline between them): that line,
    # and so the first epoch, begins with it.
    begins[1] = time.time()
    write(out, "\rSanity Checking: |          | 0/? [00:00<?, ?it/s]")
    wait_tick()
    acc = loss = 0.0
    for epoch in range(EPOCHS):
        if epoch > 0:
            begins[epoch + 1] = time.time()
        if epoch > 0:
            # The validation bar cleared and the training bar redrawn with its metrics: the
            # first bytes of this epoch's line.
            write(out, "\r" + " " * 70 + "\x1b[A\rEpoch %d: 100%%|##########| 6/6 [00:00<00:00, "
                  "19.7it/s, v_num=0, train_loss=%.3f, val_loss=0.800, val_acc=%.2f]"
                  % (epoch - 1, loss, acc))
        val = "" if epoch == 0 else ", val_loss=0.800, val_acc=%.2f" % acc
        loss, acc = 0.5 / (epoch + 1), 0.6 + 0.1 * epoch
        for step in range(7):
            write(out, "\rEpoch %d: %3d%%|          | %d/6 [00:00<00:00, 19.7it/s, v_num=0%s]"
                  % (epoch, 100 * step // 6, step, val))
            wait_tick()
        write(out, "\rEpoch %d: 100%%|##########| 6/6 [00:00<00:00, 19.7it/s, v_num=0, "
              "train_loss=%.3f%s]\n" % (epoch, loss, val))
        for step in range(3):
            write(out, "\rValidation DataLoader 0: %3d%%|          | %d/2 [00:00<00:00, 19.8it/s]"
                  "\x1b[A\n" % (50 * step, step))
            wait_tick()
    write(out, "\r" + " " * 70 + "\x1b[A\rEpoch 2: 100%%|##########| 6/6 [00:00<00:00, "
          "19.7it/s, v_num=0, train_loss=%.3f, val_loss=0.800, val_acc=%.2f]\n" % (loss, acc))
    ends[EPOCHS] = time.time()
    if shown:
        write(sys.stderr, "`Trainer.fit` stopped: `max_epochs=3` reached.\n")
    # trainer.test(): not part of any epoch.
    for step in range(6):
        write(out, "\rTesting DataLoader 0: %3d%%|          | %d/5 [00:00<00:00, 19.8it/s]"
              % (20 * step, step))
        wait_tick()
    write(out, "\n│         test_acc          │    0.7200000286102295     │\n")
elif MODE == "keras":
    for epoch in range(1, EPOCHS + 1):
        begins[epoch] = time.time()
        write(sys.stdout, "Epoch %d/%d\n" % (epoch, EPOCHS))
        for step in range(FRAMES):
            wait_tick()
        ends[epoch] = time.time()
        # Keras prints the next `Epoch` right after this line (on_epoch_end, on_epoch_begin): a
        # slower rank's end line comes after a faster rank's next marker.
        write(sys.stdout, "%d/%d - 0s - loss: %.4f - accuracy: %.4f\n"
              % (FRAMES, FRAMES, 0.5 / epoch, 0.6 + 0.1 * epoch))
else:
    sys.exit("unknown mode " + MODE)

for epoch in range(1, EPOCHS + 1):
    end = begins[epoch + 1] if epoch < EPOCHS else ends[epoch]
    write(sys.stderr, "WALL epoch=%d begin=%.6f end=%.6f\n" % (epoch, begins[epoch], end))
