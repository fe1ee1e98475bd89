#!/usr/bin/python3
"""PyTorch's side of bench/trainer_vs_pytorch.sh and bench/gpu_vs_pytorch.sh: the same model,
batch, optimizer and synthetic input as scalebench-train. mnist_cnn is the Keras/Databricks MNIST
CNN (reference/FACTS.md), trained on 1x28x28 with Adadelta, as are mlp (784-128-10) and lenet5
(LeCun et al. 1998, padded 28x28 input); the ImageNet models are torchvision's
(random weights), as in Horovod's pytorch_synthetic_benchmark.py. Prints one line: `images/s X`
(steady state: warm-up steps excluded). bench/torch_ddp.py imports mnist_cnn() from here.
--model: mnist_cnn, mlp, lenet5, or a torchvision model (vgg16, resnet50, inception_v3, ...).

--device cuda trains on GPU 0 in fp32 with PyTorch's defaults pinned explicitly: cuDNN may use
TF32 for convolutions (torch.backends.cudnn.allow_tf32 = True), matrix products do not
(torch.backends.cuda.matmul.allow_tf32 = False); torch.backends.cudnn.benchmark = True (the
algorithm of every convolution shape is picked by measurement in the warm-up steps). The clock is
read after torch.cuda.synchronize(). The synthetic batch lives on the GPU, as in Horovod's
benchmark; --host-input keeps it in ordinary (pageable) host memory and copies images and labels
to the GPU every step, as scalebench-train does with its host-side data set. Without a usable
GPU (a CPU-only torch build, or none visible) it says so on stderr and exits with 77 ("skipped").

--precision bf16 (--device cuda only) is PyTorch's automatic mixed precision in bfloat16:
forward and loss run under torch.autocast(device_type="cuda", dtype=torch.bfloat16), so
convolutions and matrix products take bf16 inputs and give bf16 outputs (fp32 accumulation),
and the ops on autocast's fp32 list (the loss, softmax, ...) run in fp32; parameters, gradients
and the optimizer stay fp32, and bf16 needs no GradScaler. With --device cpu it is refused (exit
2): scalebench-train's cpu backend has no bf16 either, so there is nothing to compare with.

usage: torch_train.py THREADS [--model mnist_cnn] [--batch 128] [--steps 30] [--warmup 5]
                              [--input 1x28x28] [--classes 10] [--optimizer adadelta|momentum]
                              [--device cpu|cuda] [--host-input] [--precision fp32|bf16]
"""
import argparse
import sys
import time

import torch
import torch.nn as nn


def mnist_cnn(classes=10):
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(128, classes))
    assert classes != 10 or sum(p.numel() for p in model.parameters()) == 1199882
    return model


def mlp(inputs=784, classes=10):
    """scalebench-train's default --hidden 128: Dense(He)+ReLU, Dense to the classes."""
    return nn.Sequential(nn.Flatten(), nn.Linear(inputs, 128), nn.ReLU(), nn.Linear(128, classes))


def lenet5(classes=10):
    """LeCun et al. 1998 as in docs/trainer.md (and scripts/reference/model_parameters.py): a
    28x28 input padded by 2 to the paper's 32x32."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.AvgPool2d(2),
        nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2),
        nn.Conv2d(16, 120, 5), nn.Tanh(), nn.Flatten(),
        nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, classes))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("threads", type=int)
    p.add_argument("--model", default="mnist_cnn")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--input", default=None)
    p.add_argument("--classes", type=int, default=None)
    p.add_argument("--optimizer", default=None)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--host-input", action="store_true",
                   help="with --device cuda: copy the batch from host memory every step")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: torch.autocast(cuda, bfloat16) around forward and loss, fp32 "
                        "parameters (--device cuda only)")
    a = p.parse_args()
    cuda = a.device == "cuda"
    if a.host_input and not cuda:
        p.error("--host-input applies to --device cuda only")
    if a.precision == "bf16" and not cuda:
        p.error("--precision bf16 applies to --device cuda only (CPU autocast is not supported "
                "here, and scalebench-train's cpu backend has no bf16)")
    if cuda and not torch.cuda.is_available():
        why = ("this torch is a CPU-only build (torch.version.cuda is None)"
               if torch.version.cuda is None else
               "no GPU visible to torch %s (CUDA %s)" % (torch.__version__, torch.version.cuda))
        print("torch_train.py: --device cuda: torch.cuda is not available: %s; skipped" % why,
              file=sys.stderr)
        sys.exit(77)
    if cuda:
        # PyTorch's defaults, stated so that a changed default cannot move the baseline.
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda:0" if cuda else "cpu")
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)

    if a.model in ("mnist_cnn", "mlp", "lenet5"):
        shape, classes, optimizer = a.input or "1x28x28", a.classes or 10, a.optimizer or "adadelta"
        if a.model == "mnist_cnn":
            model = mnist_cnn(classes)
        elif a.model == "mlp":
            inputs = 1
            for d in shape.split("x"):
                inputs *= int(d)
            model = mlp(inputs, classes)
        else:
            model = lenet5(classes)
    else:
        import torchvision.models as tvm
        shape, classes = a.input or "3x224x224", a.classes or 1000
        optimizer = a.optimizer or "momentum"
        kwargs = {"aux_logits": False, "init_weights": False} if a.model == "inception_v3" else {}
        model = getattr(tvm, a.model)(num_classes=classes, **kwargs)
    model.to(device)
    model.train()
    if optimizer == "adadelta":
        opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(a.batch, *[int(d) for d in shape.split("x")])
    y = torch.randint(0, classes, (a.batch,))
    if not a.host_input:
        x, y = x.to(device), y.to(device)  # no-ops on the CPU
    bf16 = a.precision == "bf16"

    def forward_loss():
        if a.host_input:
            return loss_fn(model(x.to(device)), y.to(device))
        return loss_fn(model(x), y)

    def step():
        opt.zero_grad()
        if bf16:
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = forward_loss()
        else:
            loss = forward_loss()
        loss.backward()
        opt.step()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    for _ in range(a.warmup):
        step()
    sync()
    start = time.perf_counter()
    for _ in range(a.steps):
        step()
    sync()
    print("images/s %.1f" % (a.steps * a.batch / (time.perf_counter() - start)))


if __name__ == "__main__":
    main()
