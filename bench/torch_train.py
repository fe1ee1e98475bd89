#!/usr/bin/python3
"""PyTorch's side of bench/trainer_vs_pytorch.sh: the Keras/Databricks MNIST CNN
(reference/FACTS.md) trained on synthetic 28x28 input with Adadelta, as scalebench-train's
--model mnist_cnn. Prints one line: `images/s X` (steady state: warm-up steps excluded).
bench/torch_ddp.py imports mnist_cnn() from here.

usage: torch_train.py THREADS [--batch 128] [--steps 30] [--warmup 5]
"""
import argparse
import time

import torch
import torch.nn as nn


def mnist_cnn():
    """The model of scalebench-train --model mnist_cnn: 1,199,882 parameters."""
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, 10))
    assert sum(p.numel() for p in model.parameters()) == 1199882
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("threads", type=int)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)

    model = mnist_cnn()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(a.batch, 1, 28, 28)
    y = torch.randint(0, 10, (a.batch,))

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    print("images/s %.1f" % (a.steps * a.batch / (time.perf_counter() - start)))


if __name__ == "__main__":
    main()
