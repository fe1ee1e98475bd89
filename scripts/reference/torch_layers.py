#!/usr/bin/python3
"""Reference values for the trainer's CPU layers and optimizers, computed by PyTorch.

Run with Debian's python3-torch (PyTorch 1.13):
    /usr/bin/python3 scripts/reference/torch_layers.py tests/data/trainer/torch_layers.txt

Every case builds tiny deterministic inputs and parameters, runs forward in float64, and takes
the backward of L = sum(r * y) for a fixed random r of y's shape (so dL/dy = r). The file is
plain text, read by tests/trainer/test_torch_reference.cpp:

    case NAME
    tensor NAME D0 D1 ...
    v0 v1 v2 ...            (row-major, PyTorch's layout, %.10g)

Layouts: conv weights (out, in/groups, kh, kw) as torch; dense W is (in, out), Keras's kernel
layout, i.e. torch.nn.Linear's weight transposed.
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(20240501)
torch.set_default_dtype(torch.float64)
out = []


def put(name, t):
    t = t.detach().contiguous()
    out.append("tensor %s %s" % (name, " ".join(str(d) for d in t.shape)))
    out.append(" ".join("%.10g" % v for v in t.reshape(-1).tolist()))


def case(name):
    out.append("case " + name)


def rand(*shape, scale=1.0):
    return (torch.randn(*shape) * scale).requires_grad_(True)


def layer_case(name, fn, inputs, params=()):
    """inputs/params: (name, tensor) pairs; y = fn(*inputs, *params)."""
    case(name)
    for n, t in list(inputs) + list(params):
        put(n, t)
    y = fn(*[t for _, t in inputs], *[t for _, t in params])
    r = torch.randn_like(y)
    put("y", y)
    put("r", r)
    (y * r).sum().backward()
    for n, t in list(inputs) + list(params):
        put("d" + n, t.grad)


def conv_case(name, n, c, h, w, oc, k, stride, pad, groups, bias=True, relu=False):
    x = rand(n, c, h, w)
    wt = rand(oc, c // groups, k[0], k[1], scale=0.5)
    params = [("w", wt)]
    if bias:
        params.append(("b", rand(oc, scale=0.5)))

    def fn(x, w, b=None):
        y = F.conv2d(x, w, b, stride=stride, padding=pad, groups=groups)
        return F.relu(y) if relu else y
    layer_case(name, fn, [("x", x)], params)


conv_case("conv_3x3", 2, 3, 6, 6, 4, (3, 3), 1, 0, 1)
conv_case("conv_relu_pad1", 2, 3, 6, 6, 4, (3, 3), 1, 1, 1, relu=True)
conv_case("conv_stride2_pad1_groups2", 2, 4, 7, 7, 6, (3, 3), 2, 1, 2)
conv_case("conv_depthwise_x2", 2, 3, 5, 5, 6, (3, 3), 1, 1, 3, bias=False)
conv_case("conv_1x3_pad01", 1, 2, 4, 5, 3, (1, 3), 1, (0, 1), 1)

layer_case("maxpool_2x2", lambda x: F.max_pool2d(x, 2, 2), [("x", rand(2, 3, 6, 6))])
layer_case("maxpool_3x3_s2_p1", lambda x: F.max_pool2d(x, 3, 2, 1), [("x", rand(2, 2, 7, 7))])
layer_case("avgpool_3x3_s1_p1_include",
           lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=True), [("x", rand(2, 2, 5, 5))])
layer_case("avgpool_3x3_s2_p1_exclude",
           lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [("x", rand(2, 2, 7, 7))])
layer_case("global_avgpool", lambda x: F.adaptive_avg_pool2d(x, 1), [("x", rand(2, 3, 4, 5))])

# Batch norm, training: batch statistics, then the running statistics after one step from (0, 1).
x = rand(4, 3, 3, 3, scale=2.0)
gamma, beta = rand(3), rand(3)
running_mean, running_var = torch.zeros(3), torch.ones(3)
layer_case("batchnorm_train",
           lambda x, g, b: F.batch_norm(x, running_mean, running_var, g, b, training=True,
                                        momentum=0.1, eps=1e-5),
           [("x", x)], [("gamma", gamma), ("beta", beta)])
put("running_mean", running_mean)
put("running_var", running_var)
# Inference with given running statistics.
rm, rv = torch.randn(3) * 0.5, torch.rand(3) + 0.5
case("batchnorm_infer")
xi = rand(2, 3, 3, 3)
put("x", xi)
put("gamma", gamma)
put("beta", beta)
put("running_mean", rm)
put("running_var", rv)
put("y", F.batch_norm(xi, rm, rv, gamma, beta, training=False, eps=1e-5))

layer_case("relu", F.relu, [("x", rand(2, 3, 4, 4))])
layer_case("relu6", F.relu6, [("x", rand(2, 3, 4, 4, scale=5.0))])
layer_case("add", lambda a, b: a + b, [("a", rand(2, 3, 4, 4)), ("b", rand(2, 3, 4, 4))])
layer_case("concat", lambda a, b: torch.cat([a, b], 1),
           [("a", rand(2, 2, 3, 3)), ("b", rand(2, 3, 3, 3))])
layer_case("flatten", lambda x: torch.flatten(x, 1), [("x", rand(2, 3, 2, 2))])
layer_case("dense", lambda x, w, b: x @ w + b, [("x", rand(3, 5))], [("w", rand(5, 4)), ("b", rand(4))])

# Softmax cross-entropy: mean over the batch; dlogits of the mean loss.
case("softmax_cross_entropy")
logits = rand(5, 4, scale=2.0)
labels = torch.tensor([0, 3, 1, 2, 3])
put("logits", logits)
put("labels", labels.double())
loss = F.cross_entropy(logits, labels)
put("loss", loss.reshape(1))
loss.backward()
put("dlogits", logits.grad)

# Optimizers: 7 steps on 6 parameters with a fixed gradient sequence (RAdam's rectified branch
# starts at step 6 with beta2 = 0.999).
w0 = torch.randn(6)
grads = torch.randn(7, 6)
optimizers = [
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1)),
    ("momentum", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("nesterov", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
    ("adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0)),
    ("adadelta_wd", lambda p: torch.optim.Adadelta(p, lr=1.0, weight_decay=0.1)),
    ("rmsprop", lambda p: torch.optim.RMSprop(p, lr=0.01)),
    ("adam", lambda p: torch.optim.Adam(p, lr=0.01)),
    ("adam_wd", lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
    ("radam", lambda p: torch.optim.RAdam(p, lr=0.01)),
]
for name, make in optimizers:
    case("optimizer_" + name)
    w = w0.clone().float().requires_grad_(True)  # float32, as the trainer
    opt = make([w])
    put("w0", w)
    put("grads", grads)
    for g in grads:
        w.grad = g.float().clone()
        opt.step()
    put("w", w)

# Layers added with the graph models (appended here so that the cases above keep their values):
# tanh (LeNet-5), batch norm with the ReLU fused (ResNet/Inception units, Inception's eps 1e-3),
# and a 7x1 convolution with padding (3, 0) (Inception's factorised 7x7).
torch.set_default_dtype(torch.float64)
layer_case("tanh", torch.tanh, [("x", rand(2, 3, 4, 4))])
layer_case("batchnorm_relu_train",
           lambda x, g, b: F.relu(F.batch_norm(x, torch.zeros(16), torch.ones(16), g, b,
                                               training=True, momentum=0.1, eps=1e-3)),
           [("x", rand(3, 16, 3, 3, scale=2.0))], [("gamma", rand(16)), ("beta", rand(16))])
conv_case("conv_7x1_pad30", 2, 3, 8, 5, 4, (7, 1), 1, (3, 0), 1, bias=False)

with open(sys.argv[1], "w") as f:
    f.write("# written by scripts/reference/torch_layers.py with torch %s\n" % torch.__version__)
    f.write("\n".join(out) + "\n")
