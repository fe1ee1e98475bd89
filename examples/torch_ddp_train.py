#!/usr/bin/python3
"""A plain PyTorch DistributedDataParallel trainer that prints Keras-style lines, and nothing
that only scalebench reads: scalebench measures it the way it measures any user's script
(docs/launchers.md, "PyTorch DDP"). It trains what scalebench-train trains, the same way:

- models: mnist_cnn and mlp defined here (the Keras MNIST CNN; a ReLU MLP), vgg16, resnet50,
  mobilenet_v2 and inception_v3 from torchvision (random weights);
- data: Fashion-MNIST from Debian's dataset-fashion-mnist (the IDX files), or synthetic images
  of any shape (class prototypes plus noise; not the same numbers as scalebench-train's);
- every rank takes its own contiguous slice of one permutation per epoch, batch --batch-size per
  rank, steps per epoch = train images // (batch x world size), or --images-per-rank // batch
  for weak scaling, learning rate x world size
  (Horovod's rule, as scalebench-train), torch.optim's optimizers with their defaults;
- gloo on CPU (--backend cpu), NCCL on GPUs (--backend cuda, one GPU per local rank).

Rank and world size come from whichever launcher started it: torchrun (RANK, WORLD_SIZE),
Open MPI's mpirun (OMPI_COMM_WORLD_*), MPICH/Intel MPI (PMI_RANK, PMI_SIZE) or Slurm's srun
(SLURM_PROCID, SLURM_NTASKS); alone it is one process without DDP. The rendezvous is MASTER_ADDR
and MASTER_PORT (torchrun sets them; default 127.0.0.1 and a port derived from the launcher's job
id, so that runs one after another on one host do not meet a port still in use).

Output, from rank 0 only, as Keras's model.fit(verbose=2) prints it:
    Epoch 1/3
    468/468 - 3.214s - loss: 0.5123 - accuracy: 0.8123 - val_loss: 0.4012 - val_accuracy: 0.8534
The time is the epoch's, on this process's clock (Keras rounds it to whole seconds; here it has
milliseconds), training and test evaluation included, as scalebench-train's epoch_seconds.

usage: torch_ddp_train.py [--model mnist_cnn] [--dataset fashion-mnist|synthetic] [--epochs 3]
                          [--batch-size 128] [--lr 0.05] [--optimizer sgd] [--threads 1] ...
"""
import argparse
import gzip
import os
import struct
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def mnist_cnn(shape, classes):
    # Keras's mnist_cnn.py, as in scalebench-train (1,199,882 parameters on 1x28x28, 10 classes).
    flat = 64 * ((shape[1] - 4) // 2) * ((shape[2] - 4) // 2)
    return nn.Sequential(
        nn.Conv2d(shape[0], 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(flat, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, classes))


def mlp(inputs, hidden, classes):
    layers, width = [nn.Flatten()], inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers)


def make_model(a, shape, classes):
    if a.model == "mnist_cnn":
        return mnist_cnn(shape, classes)
    if a.model == "mlp":
        return mlp(shape[0] * shape[1] * shape[2], a.hidden, classes)
    import torchvision.models as models
    if a.model == "inception_v3":
        model = models.inception_v3(num_classes=classes, aux_logits=False, init_weights=True)
    else:
        model = getattr(models, a.model)(num_classes=classes)
    # As scalebench-train: the first convolution takes the data's channels (1 for MNIST-shaped
    # data), and VGG-16's classifier sees 512 x (H/32) x (W/32) without torchvision's adaptive
    # pooling to 7 x 7 (the same network at 224 x 224).
    first = {"resnet50": lambda: (model, "conv1"), "vgg16": lambda: (model.features, "0"),
             "mobilenet_v2": lambda: (model.features[0], "0"),
             "inception_v3": lambda: (model.Conv2d_1a_3x3, "conv")}[a.model]()
    old = getattr(first[0], first[1])
    if shape[0] != old.in_channels:
        setattr(first[0], first[1], nn.Conv2d(shape[0], old.out_channels, old.kernel_size,
                                              old.stride, old.padding, bias=old.bias is not None))
    if a.model == "vgg16":
        model.avgpool = nn.Identity()
        model.classifier[0] = nn.Linear(512 * (shape[1] // 32) * (shape[2] // 32), 4096)
    return model


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    sizes = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(sizes)


def idx_file(directory, stem):
    for name in (stem + ".gz", stem):
        if os.path.exists(os.path.join(directory, name)):
            return os.path.join(directory, name)
    sys.exit("torch_ddp_train.py: no %s(.gz) in %s (apt-get install dataset-fashion-mnist)"
             % (stem, directory))


def load_data(a):
    """(train images, train labels, test images, test labels, shape, classes); pixels in [0, 1]."""
    if a.dataset == "fashion-mnist":
        def images(stem):
            return read_idx(idx_file(a.data_dir, stem)).float().div_(255).unsqueeze(1)

        def labels(stem):
            return read_idx(idx_file(a.data_dir, stem)).long()
        x, y = images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte")
        tx, ty = images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte")
        shape, classes = (1, 28, 28), 10
    else:
        shape = tuple(int(d) for d in a.input_shape.split("x"))
        classes = a.classes
        g = torch.Generator().manual_seed(a.seed)
        prototypes = torch.rand((classes,) + shape, generator=g)

        def draw(n):
            y = torch.randint(0, classes, (n,), generator=g)
            x = (prototypes[y] + 0.5 * torch.rand((n,) + shape, generator=g)).clamp_(0, 1)
            return x, y
        x, y = draw(a.train_images)
        tx, ty = draw(a.test_images) if a.test_images else (None, None)
    if a.train_limit:
        x, y = x[:a.train_limit], y[:a.train_limit]
    return x, y, tx, ty, shape, classes


def launcher_rank_and_size():
    for rank, size in (("RANK", "WORLD_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                       ("PMI_RANK", "PMI_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS")):
        if rank in os.environ and size in os.environ:
            return int(os.environ[rank]), int(os.environ[size])
    return 0, 1


def default_port():
    # All ranks of one job see the same job id; consecutive jobs get different ports.
    for key in ("SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMI_ID"):
        if os.environ.get(key, "").isdigit():
            return 20000 + int(os.environ[key]) % 20000
    return 29500


def make_optimizer(a, params, lr):
    if a.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=a.momentum, weight_decay=a.weight_decay)
    if a.optimizer in ("momentum", "nesterov"):
        return torch.optim.SGD(params, lr=lr, momentum=a.momentum or 0.9,
                               nesterov=a.optimizer == "nesterov", weight_decay=a.weight_decay)
    cls = {"adadelta": torch.optim.Adadelta, "rmsprop": torch.optim.RMSprop,
           "adam": torch.optim.Adam}[a.optimizer]
    return cls(params, lr=lr, weight_decay=a.weight_decay)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="mnist_cnn",
                   choices=["mlp", "mnist_cnn", "vgg16", "resnet50", "mobilenet_v2",
                            "inception_v3"])
    p.add_argument("--hidden", type=lambda s: [int(v) for v in s.split(",")], default=[128])
    p.add_argument("--dataset", default="fashion-mnist", choices=["fashion-mnist", "synthetic"])
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--input-shape", default="1x28x28")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--train-images", type=int, default=60000)
    p.add_argument("--test-images", type=int, default=10000)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--images-per-rank", type=int, default=0,
                   help="weak scaling: images each rank trains per epoch (whole batches)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05, help="per rank; the rate used is lr x ranks")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--optimizer", default="sgd",
                   choices=["sgd", "momentum", "nesterov", "adadelta", "rmsprop", "adam"])
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                   help="cpu: gloo; cuda: NCCL, one GPU per local rank")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    rank, size = launcher_rank_and_size()
    if a.backend == "cuda":
        local = int(os.environ.get("LOCAL_RANK", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK",
                                                                os.environ.get("SLURM_LOCALID", 0))))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    if size > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(default_port()))
        dist.init_process_group("nccl" if a.backend == "cuda" else "gloo", rank=rank,
                                world_size=size)

    x, y, tx, ty, shape, classes = load_data(a)
    torch.manual_seed(a.seed)  # the same initial parameters everywhere (DDP broadcasts rank 0's)
    model = make_model(a, shape, classes).to(device)
    if size > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = make_optimizer(a, model.parameters(), a.lr * size)
    loss_fn = nn.CrossEntropyLoss(reduction="sum")

    if a.images_per_rank:
        if a.images_per_rank % a.batch_size or a.images_per_rank * size > len(x):
            sys.exit("torch_ddp_train.py: --images-per-rank %d must be a whole number of batches "
                     "(--batch-size %d) and at most the %d training images / %d ranks"
                     % (a.images_per_rank, a.batch_size, len(x), size))
        steps = a.images_per_rank // a.batch_size
    else:
        steps = len(x) // (a.batch_size * size)
    if steps == 0:
        sys.exit("torch_ddp_train.py: %d training images are fewer than one batch of %d per rank "
                 "on %d ranks" % (len(x), a.batch_size, size))
    shard = rank * steps * a.batch_size
    for epoch in range(1, a.epochs + 1):
        if rank == 0:
            print("Epoch %d/%d" % (epoch, a.epochs))
        start = time.perf_counter()
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(a.seed + epoch))
        mine = order[shard:shard + steps * a.batch_size]
        totals = torch.zeros(5, dtype=torch.float64)  # loss, correct, seen, test correct, seen
        model.train()
        for step in range(steps):
            index = mine[step * a.batch_size:(step + 1) * a.batch_size]
            images, labels = x[index].to(device), y[index].to(device)
            optimizer.zero_grad()
            out = model(images)
            loss = loss_fn(out, labels)
            (loss / len(index)).backward()
            optimizer.step()
            totals[0] += loss.item()
            totals[1] += (out.argmax(1) == labels).sum().item()
            totals[2] += len(index)
        if tx is not None:
            model.eval()
            with torch.no_grad():
                test_share = range(rank * len(tx) // size, (rank + 1) * len(tx) // size)
                for begin in range(test_share.start, test_share.stop, a.batch_size):
                    end = min(begin + a.batch_size, test_share.stop)
                    out = model(tx[begin:end].to(device))
                    totals[3] += (out.argmax(1).cpu() == ty[begin:end]).sum().item()
                    totals[4] += end - begin
        if size > 1:
            reduced = totals.to(device) if a.backend == "cuda" else totals
            dist.all_reduce(reduced)
            totals = reduced.cpu()
        seconds = time.perf_counter() - start
        if rank == 0:
            line = "%d/%d - %.3fs - loss: %.4f - accuracy: %.4f" % (
                steps, steps, seconds, totals[0] / totals[2], totals[1] / totals[2])
            if totals[4] > 0:
                line += " - val_accuracy: %.4f" % (totals[3] / totals[4])
            print(line)
    if size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
