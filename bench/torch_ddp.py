#!/usr/bin/python3
"""PyTorch's side of bench/scaling_vs_ddp.sh: data-parallel mnist_cnn (bench/torch_train.py's
model) with DistributedDataParallel on the gloo backend, one thread per process, NP processes on
this host (torch.multiprocessing.spawn, rendezvous on 127.0.0.1). Each process trains its own
batch of BATCH synthetic 28x28 images with Adadelta (lr 1.0), as scalebench-train does per rank.
NP=1 trains one plain process without DDP (the baseline that scaling is measured against, like
scalebench-train's np=1 without mpirun); --ddp-at-1 wraps it in DDP with world size 1 instead.

Prints one line: `images/s X`, the images of all processes over the timed steps divided by the
time between two barriers around them (warm-up steps excluded), as rank 0 sees it.

usage: torch_ddp.py NP [--batch 128] [--steps 30] [--warmup 5] [--ddp-at-1]
"""
import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train import mnist_cnn  # noqa: E402


def worker(rank, a, port):
    torch.set_num_threads(1)
    torch.manual_seed(1)  # the same initial parameters on every rank (DDP broadcasts rank 0's anyway)
    model = mnist_cnn()
    distributed = a.np > 1 or a.ddp_at_1
    if distributed:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=a.np)
        # Default buckets (1 MiB first, then 25 MiB) and DDP's own overlap of allreduce with
        # backward: PyTorch as people run it.
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    x = torch.rand(a.batch, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (a.batch,), generator=g)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(a.warmup):
        step()
    if distributed:
        dist.barrier()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    if distributed:
        dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print("images/s %.1f" % (a.np * a.steps * a.batch / seconds), flush=True)
    if distributed:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("np", type=int)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--ddp-at-1", action="store_true")
    a = p.parse_args()
    # Children inherit the environment: one intra-op thread each, as scalebench's --threads 1.
    os.environ["OMP_NUM_THREADS"] = "1"
    if a.np == 1 and not a.ddp_at_1:
        worker(0, a, 0)
    else:
        mp.spawn(worker, args=(a, free_port()), nprocs=a.np, join=True)


if __name__ == "__main__":
    main()
