#!/usr/bin/python3
"""PyTorch's side of bench/trainer_vs_pytorch.sh and bench/gpu_vs_pytorch.sh: the same model,
batch, optimizer and synthetic input as scalebench-train. mnist_cnn is the Keras/Databricks MNIST
CNN (reference/FACTS.md), trained on 1x28x28 with Adadelta, as are mlp (784-128-10) and lenet5
(LeCun et al. 1998, padded 28x28 input); the ImageNet models are torchvision's
(random weights), as in Horovod's pytorch_synthetic_benchmark.py. Prints one line: `images/s X`
(steady state: warm-up steps excluded). bench/torch_ddp.py imports mnist_cnn() from here.
--model: mnist_cnn, mlp, lenet5, or a torchvision model (vgg16, resnet50, inception_v3,
mobilenet_v2, ...; default input 3x224x224, inception_v3 3x299x299, 1000 classes, as
scalebench-train's zoo).

--device cuda trains on GPU 0 in fp32 with PyTorch's defaults pinned explicitly: cuDNN may use
TF32 for convolutions (torch.backends.cudnn.allow_tf32 = True), matrix products do not
(torch.backends.cuda.matmul.allow_tf32 = False); torch.backends.cudnn.benchmark = True (the
algorithm of every convolution shape is picked by measurement in the warm-up steps). The clock is
read after torch.cuda.synchronize(). The synthetic batch lives on the GPU, as in Horovod's
benchmark; --host-input keeps it in ordinary (pageable) host memory and copies images and labels
to the GPU every step, as scalebench-train does with its host-side data set. Without a usable
GPU (a CPU-only torch build, or none visible) it says so on stderr and exits with 77 ("skipped").

--precision bf16 is PyTorch's automatic mixed precision in bfloat16: forward and loss run under
torch.autocast(device_type=DEVICE, dtype=torch.bfloat16), so convolutions and matrix products
take bf16 inputs and give bf16 outputs (fp32 accumulation), and the ops on autocast's fp32 list
(the loss, softmax, ...) run in fp32; parameters, gradients and the optimizer stay fp32, and bf16
needs no GradScaler. With --device cpu it runs (CPU autocast) only to rehearse the GPU bench
without a GPU: scalebench-train's cpu backend has no bf16, so no bench compares it there.

--channels-last converts the model and the batch to torch.channels_last (NHWC in memory), the
layout in which cuDNN's tensor-core kernels run without transposes; it changes nothing else.
--variants LIST trains several set-ups one after another in this one process (a fresh model and
optimizer each; one Python start-up and one CUDA context for all), printing `images/s X
variant=NAME` per set-up: nchw (batch kept on the device), channels_last (the same with
--channels-last), host (--host-input, NCHW). bench/gpu_vs_pytorch.sh uses it to save a process
start per set-up.

usage: torch_train.py THREADS [--model mnist_cnn] [--batch 128] [--steps 30] [--warmup 5]
                              [--input 1x28x28] [--classes 10] [--optimizer adadelta|momentum]
                              [--device cpu|cuda] [--host-input] [--precision fp32|bf16]
                              [--channels-last] [--variants nchw,channels_last,host]
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


# scalebench-train's input sizes for the ImageNet models (trainer/model/zoo.cpp, docs/trainer.md):
# inception_v3 at 299x299 as in its paper, the others at 224x224; 1000 classes.
DEFAULT_INPUTS = {"inception_v3": "3x299x299"}
VARIANTS = {"nchw": (False, False), "channels_last": (True, False), "host": (False, True)}


def defaults(name):
    """(input shape, classes, optimizer) when the command line gives none."""
    if name in ("mnist_cnn", "mlp", "lenet5"):
        return "1x28x28", 10, "adadelta"
    return DEFAULT_INPUTS.get(name, "3x224x224"), 1000, "momentum"


def build_model(name, shape, classes):
    """mnist_cnn, mlp, lenet5 from here; any other name is a torchvision model (random weights)."""
    if name == "mnist_cnn":
        return mnist_cnn(classes)
    if name == "mlp":
        inputs = 1
        for d in shape.split("x"):
            inputs *= int(d)
        return mlp(inputs, classes)
    if name == "lenet5":
        return lenet5(classes)
    import torchvision.models as tvm
    # No auxiliary classifier: scalebench's inception_v3 has none (its training output would be a
    # tuple); init_weights=False skips a slow truncated-normal init that does not change speed.
    kwargs = {"aux_logits": False, "init_weights": False} if name == "inception_v3" else {}
    return getattr(tvm, name)(num_classes=classes, **kwargs)


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
                   help="bf16: torch.autocast(DEVICE, bfloat16) around forward and loss, fp32 "
                        "parameters")
    p.add_argument("--channels-last", action="store_true",
                   help="model and batch in torch.channels_last memory format")
    p.add_argument("--variants", default=None,
                   help="comma list of nchw, channels_last, host: each trained in turn, one "
                        "`images/s X variant=NAME` line each")
    a = p.parse_args()
    cuda = a.device == "cuda"
    if a.variants is not None:
        if a.host_input or a.channels_last:
            p.error("--variants names the set-ups itself: no --host-input or --channels-last with it")
        variants = a.variants.split(",")
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown or not variants:
            p.error("--variants: %s not among %s" % (",".join(unknown) or "(empty)", ",".join(VARIANTS)))
    else:
        variants = None
    if (a.host_input or "host" in (variants or [])) and not cuda:
        p.error("--host-input (variant host) applies to --device cuda only")
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
    torch.set_num_threads(a.threads)
    shape, classes, optimizer = defaults(a.model)
    shape, classes, optimizer = a.input or shape, a.classes or classes, a.optimizer or optimizer
    if variants is None:
        print("images/s %.1f" % train(a, shape, classes, optimizer, a.channels_last, a.host_input))
        return
    for name in variants:
        rate = train(a, shape, classes, optimizer, *VARIANTS[name])
        if cuda:
            torch.cuda.empty_cache()  # the last set-up's memory back: each starts alike
        print("images/s %.1f variant=%s" % (rate, name), flush=True)


def train(a, shape, classes, optimizer, channels_last, host_input):
    """Builds the model afresh (seed 1) and returns its steady-state images/s."""
    cuda = a.device == "cuda"
    device = torch.device("cuda:0" if cuda else "cpu")
    torch.manual_seed(1)
    model = build_model(a.model, shape, classes)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model.to(device, memory_format=fmt)
    model.train()
    if optimizer == "adadelta":
        opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(a.batch, *[int(d) for d in shape.split("x")])
    if channels_last and x.dim() == 4:
        x = x.contiguous(memory_format=torch.channels_last)  # stays so through .to(device)
    y = torch.randint(0, classes, (a.batch,))
    if not host_input:
        x, y = x.to(device), y.to(device)  # no-ops on the CPU
    bf16 = a.precision == "bf16"

    def forward_loss():
        if host_input:
            return loss_fn(model(x.to(device)), y.to(device))
        return loss_fn(model(x), y)

    def step():
        opt.zero_grad()
        if bf16:
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
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
    return a.steps * a.batch / (time.perf_counter() - start)


if __name__ == "__main__":
    main()
