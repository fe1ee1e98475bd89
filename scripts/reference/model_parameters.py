#!/usr/bin/env python3
"""Parameter counts of the reference implementations of scalebench-train's models, for
tests/trainer/test_models.cpp. Runs offline with Debian's python3-torch and python3-torchvision
(no weights are downloaded: the models are built with random initialisation).

    /usr/bin/python3 scripts/reference/model_parameters.py

Counts are trainable parameters (batch norm's running statistics are buffers, not parameters,
in torchvision as in scalebench). Inception v3 is built without the auxiliary classifier, which
is only used for training-time regularisation and which scalebench does not implement.
"""
import torch
import torchvision.models as tvm


def count(model):
    return sum(p.numel() for p in model.parameters())


class MnistCnn(torch.nn.Module):  # the Keras/Databricks network (shared/reference/FACTS.md)
    def __init__(self, classes=10):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Dropout(0.25), torch.nn.Flatten(),
            torch.nn.Linear(9216, 128), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(128, classes))


class LeNet5(torch.nn.Module):  # LeCun et al. 1998, C3 fully connected, 32x32 input
    def __init__(self, classes=10):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.Tanh(), torch.nn.AvgPool2d(2),
            torch.nn.Conv2d(6, 16, 5), torch.nn.Tanh(), torch.nn.AvgPool2d(2),
            torch.nn.Conv2d(16, 120, 5), torch.nn.Tanh(), torch.nn.Flatten(),
            torch.nn.Linear(120, 84), torch.nn.Tanh(), torch.nn.Linear(84, classes))


rows = [
    ("mnist_cnn", "1x28x28", 10, MnistCnn()),
    ("lenet5", "1x28x28", 10, LeNet5()),
    ("vgg16", "3x224x224", 1000, tvm.vgg16()),
    ("resnet50", "3x224x224", 1000, tvm.resnet50()),
    ("inception_v3", "3x299x299", 1000, tvm.inception_v3(aux_logits=False, init_weights=False)),
    ("mobilenet_v2", "3x224x224", 1000, tvm.mobilenet_v2()),
    ("resnet50", "3x32x32", 10, tvm.resnet50(num_classes=10)),
    ("mobilenet_v2", "3x32x32", 100, tvm.mobilenet_v2(num_classes=100)),
]
print(f"# torch {torch.__version__}")
for name, shape, classes, model in rows:
    print(f"{name} input={shape} classes={classes} parameters={count(model)}")
