#!/usr/bin/env python3
"""Training FLOPs per image of bench/torch_train.py's models, counted by PyTorch's own
FlopCounterMode (torch >= 2.1: convolutions and matrix products, forward + backward; 2 FLOPs per
multiply-add; element-wise ops, pooling and batch norm are not counted, as in the usual "model
FLOPs" of MFU figures). Used for the GPU utilisation in docs/trainer-cuda.md and by
bench/gpu_vs_pytorch.sh: utilisation = FLOPs per image x images/s / the card's peak FLOP/s.
Inputs as scalebench-train's zoo: inception_v3 3x299x299, the other ImageNet models 3x224x224.

An older torch (Debian 12 ships 1.13) has no FlopCounterMode; then forward hooks on every Conv2d
and Linear count the same thing by FlopCounterMode's rules: forward 2 x multiply-adds; backward
the weight gradient (as many) and the input gradient (as many) only where the layer's input needs
a gradient, so not for the first layer. The two agree on mnist_cnn and resnet50 (see
bench/model_flops.txt). counter= on each line says which one counted.

usage: model_flops.py [MODEL ...]     (default: mnist_cnn resnet50)
prints one line per model:
  MODEL input=CxHxW forward_flops=F train_flops=T counter=flop_counter_mode|hooks   (per image)
"""
import sys

import torch
import torch.nn as nn

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_train import build_model, defaults  # noqa: E402

try:
    from torch.utils.flop_counter import FlopCounterMode
except ImportError:  # torch < 2.1
    FlopCounterMode = None


def build(name):
    shape, classes, _ = defaults(name)
    return build_model(name, shape, classes), tuple(int(d) for d in shape.split("x")), classes


def count_mode(model, x, y):
    with FlopCounterMode(display=False) as forward:
        model(x)
    with FlopCounterMode(display=False) as both:
        nn.functional.cross_entropy(model(x), y).backward()
    return forward.get_total_flops(), both.get_total_flops()


def count_hooks(model, x, y):
    """FlopCounterMode's totals from the layers' shapes, seen by forward hooks."""
    totals = [0, 0]  # forward, forward + backward

    def hook(layer, inputs, out):
        if isinstance(layer, nn.Conv2d):
            w = layer.weight
            macs = out.numel() * w.shape[1] * w.shape[2] * w.shape[3]  # per output: Cin/groups*kh*kw
        else:
            macs = out.numel() * layer.in_features
        totals[0] += 2 * macs
        totals[1] += 2 * macs * (3 if inputs[0].requires_grad else 2)

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, (nn.Conv2d, nn.Linear))]
    model(x)
    for h in handles:
        h.remove()
    return totals[0], totals[1]


def main():
    counter = count_mode if FlopCounterMode is not None else count_hooks
    batch = 2  # batch norm in training mode needs more than one value per channel
    for name in sys.argv[1:] or ["mnist_cnn", "resnet50"]:
        torch.manual_seed(1)
        model, shape, classes = build(name)
        model.train()
        x = torch.randn(batch, *shape)
        y = torch.randint(0, classes, (batch,))
        f, t = counter(model, x, y)
        print("%s input=%s forward_flops=%.4g train_flops=%.4g counter=%s" % (
            name, "x".join(map(str, shape)), f / batch, t / batch,
            "flop_counter_mode" if FlopCounterMode is not None else "hooks"), flush=True)


if __name__ == "__main__":
    main()
