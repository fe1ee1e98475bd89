#!/usr/bin/env python3
"""Training FLOPs per image of bench/torch_train.py's models, counted by PyTorch's own
FlopCounterMode (torch >= 2.1: convolutions and matrix products, forward + backward; 2 FLOPs per
multiply-add; element-wise ops, pooling and batch norm are not counted, as in the usual "model
FLOPs" of MFU figures). Used for the GPU utilisation in docs/trainer-cuda.md:
utilisation = FLOPs per image x images/s / the card's peak FLOP/s.

usage: model_flops.py [MODEL ...]     (default: mnist_cnn resnet50)
prints one line per model: MODEL input=CxHxW forward_flops=F train_flops=T (per image)
"""
import sys

import torch
import torch.nn as nn
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_train import mnist_cnn  # noqa: E402


def build(name):
    if name == "mnist_cnn":
        return mnist_cnn(10), (1, 28, 28), 10
    import torchvision
    return getattr(torchvision.models, name)(num_classes=1000), (3, 224, 224), 1000


def count(model, shape, classes, batch=2):
    x = torch.randn(batch, *shape)
    y = torch.randint(0, classes, (batch,))
    with FlopCounterMode(display=False) as forward:
        out = model(x)
    with FlopCounterMode(display=False) as both:
        out = model(x)
        nn.functional.cross_entropy(out, y).backward()
    return forward.get_total_flops() / batch, both.get_total_flops() / batch


for name in sys.argv[1:] or ["mnist_cnn", "resnet50"]:
    model, shape, classes = build(name)
    f, t = count(model, shape, classes)
    print("%s input=%s forward_flops=%.4g train_flops=%.4g" % (name, "x".join(map(str, shape)), f, t))
