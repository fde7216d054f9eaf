#!/usr/bin/env python3
"""The differential campaign's program generator: random programs made by ExecuTorch's own
exporter, run in ExecuTorch's runtime (the x86 wheel), written with their inputs and ExecuTorch's
outputs for etscope to replay (`core/tests/campaign.rs`).

    /tmp/etvenv/bin/python scripts/campaign/generate.py OUT --first 0 --count 2000   # executorch 1.5.1

Program `k` is a pure function of `k` (its own seeded generator), so any slice can be remade, and
two machines can split the work (`--first`, `--count`). Each program is one of:

- a DAG of 2–9 elementwise, reduction, shape, normalisation and linear-algebra operators over one
  to three inputs, random shapes (size 1, primes, powers of two; broadcast operands; 4-D inputs
  in channels-last order), float32 or integer and boolean dtypes;
- a module with a mutable buffer updated in place, called three times (state carried over);
- a dynamic-shape program exported with a bound and run below it;
- a program of two methods (`forward` and `second`).

`--layers` makes another family instead (program `k` of it again a pure function of `k`): a
random stack of 2–6 layers over a 4-D (or 3-D) float input — convolutions (stride, padding,
dilation, groups, with and without bias, 1-D and 2-D), transposed convolutions (output padding,
groups), batch norm in inference with random statistics, group, layer and instance norm, max and
average pooling (ceil mode, padding), adaptive average pooling, nearest and bilinear upsampling,
activations between them, and a linear head: the kernels whose order of operations shows in the
last bit.

Writes OUT/NNNNN/model.pte and case.json: per method, its calls, each call's inputs and
ExecuTorch's outputs as .npy files. A program ExecuTorch's exporter or runtime rejects is not
written; OUT/NNNNN.skipped says why (they are counted apart, never as etscope results).

`--references` adds, to every written float DAG or layer program, the outputs of the same module run
eagerly by PyTorch in float64 (`forward_call0_reference<i>.npy`): the arbiter where ExecuTorch's
x86 wheel runs an operator with an optimized kernel (not the portable one a device runs) and its
answer and etscope's differ — the one nearer the float64 answer is the more exact.
"""
import argparse
import json
import pathlib
import random
import traceback

import numpy as np
import torch
from executorch.exir import to_edge
from executorch.runtime import Runtime

SIZES = [1, 2, 3, 4, 5, 7, 8, 13, 16]

# name: (arity, function, needs float input)
UNARY = {
    "relu": lambda x: torch.relu(x),
    "sigmoid": lambda x: torch.sigmoid(x),
    "tanh": lambda x: torch.tanh(x),
    "exp": lambda x: torch.exp(x.clamp(-20, 20)),
    "log": lambda x: torch.log(x.abs() + 0.5),
    "log2": lambda x: torch.log2(x.abs() + 0.25),
    "log10": lambda x: torch.log10(x.abs() + 0.25),
    "log1p": lambda x: torch.log1p(x.abs()),
    "expm1": lambda x: torch.expm1(x.clamp(-10, 10)),
    "sqrt": lambda x: torch.sqrt(x.abs()),
    "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
    "sin": lambda x: torch.sin(x),
    "cos": lambda x: torch.cos(x),
    "atan": lambda x: torch.atan(x),
    "asinh": lambda x: torch.asinh(x),
    "sinh": lambda x: torch.sinh(x.clamp(-8, 8)),
    "cosh": lambda x: torch.cosh(x.clamp(-8, 8)),
    "asin": lambda x: torch.asin(torch.tanh(x)),
    "acos": lambda x: torch.acos(torch.tanh(x)),
    "atanh": lambda x: torch.atanh(torch.tanh(x) * 0.9),
    "erf": lambda x: torch.erf(x),
    "gelu": lambda x: torch.nn.functional.gelu(x),
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda x: torch.nn.functional.silu(x),
    "hardtanh": lambda x: torch.nn.functional.hardtanh(x, -0.5, 0.75),
    "hardswish": lambda x: torch.nn.functional.hardswish(x),
    "hardsigmoid": lambda x: torch.nn.functional.hardsigmoid(x),
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda x: torch.nn.functional.elu(x, 0.7),
    "softplus": lambda x: torch.nn.functional.softplus(x),
    "abs": lambda x: torch.abs(x),
    "neg": lambda x: torch.neg(x),
    "floor": lambda x: torch.floor(x * 3),
    "ceil": lambda x: torch.ceil(x * 3),
    "round": lambda x: torch.round(x * 3),
    "trunc": lambda x: torch.trunc(x * 3),
    "sign": lambda x: torch.sign(x),
    "reciprocal": lambda x: torch.reciprocal(x.abs() + 0.5),
    "square": lambda x: x * x,
    "clamp": lambda x: torch.clamp(x, -0.3, 0.6),
    "logit": lambda x: torch.logit(torch.sigmoid(x), eps=1e-3),
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "log_softmax": lambda x: torch.log_softmax(x, dim=-1),
    "sum": lambda x: x.sum(dim=-1, keepdim=True),
    "mean": lambda x: x.mean(dim=0, keepdim=True),
    "amax": lambda x: x.amax(dim=-1, keepdim=True),
    "cumsum": lambda x: torch.cumsum(x, dim=-1),
    "flip": lambda x: torch.flip(x, dims=[-1]),
    "transpose": lambda x: x.transpose(0, -1).contiguous(),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, x.shape[-1:]),
    "pow_scalar": lambda x: torch.pow(x.abs() + 0.1, 1.7),
    "pow_int": lambda x: torch.pow(x, 3),
    "var": lambda x: x.var(dim=-1, keepdim=True),
}

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5),
    "maximum": lambda a, b: torch.maximum(a, b),
    "minimum": lambda a, b: torch.minimum(a, b),
    "atan2": lambda a, b: torch.atan2(a, b),
    "pow": lambda a, b: torch.pow(a.abs() + 0.1, b.clamp(-3, 3)),
    "fmod": lambda a, b: torch.fmod(a, b.abs() + 0.5),
    "remainder": lambda a, b: torch.remainder(a, b.abs() + 0.5),
    "where": lambda a, b: torch.where(a > b, a, b * 0.5),
    "glu": lambda a, b: torch.nn.functional.glu(torch.cat([a, b], dim=-1), dim=-1),
    "hypot_like": lambda a, b: torch.sqrt(a * a + b * b),
    "lerp_like": lambda a, b: a + 0.3 * (b - a),
}

INTEGER_UNARY = {
    "abs": lambda x: torch.abs(x),
    "neg": lambda x: -x,
    "square": lambda x: x * x,
    "sum": lambda x: x.sum(dim=-1, keepdim=True),
    "amax": lambda x: x.amax(dim=-1, keepdim=True),
    "flip": lambda x: torch.flip(x, dims=[0]),
    "cumsum": lambda x: torch.cumsum(x, dim=-1),
    "clamp": lambda x: torch.clamp(x, -3, 4),
    "to_float_sigmoid": lambda x: torch.sigmoid(x.float()),
    "to_float_sqrt": lambda x: torch.sqrt(x.abs().float()),
}

INTEGER_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": lambda a, b: torch.maximum(a, b),
    "minimum": lambda a, b: torch.minimum(a, b),
    "floor_divide": lambda a, b: torch.div(a, b.abs() + 1, rounding_mode="floor"),
    "remainder": lambda a, b: torch.remainder(a, b.abs() + 1),
    "bitwise_and": lambda a, b: a & b,
    "bitwise_xor": lambda a, b: a ^ b,
    "eq_where": lambda a, b: torch.where(a == b, a, b),
    "gt_float": lambda a, b: (a > b).float() * 2.5,
}


def shape_for(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3, 3, 4])
    return [rng.choice(SIZES) for _ in range(rank)]


def broadcast_partner(rng: random.Random, shape):
    """A shape that broadcasts with `shape`: some dims 1, maybe fewer dims."""
    other = [d if rng.random() < 0.6 else 1 for d in shape]
    drop = rng.randrange(0, len(other)) if rng.random() < 0.3 else 0
    return other[drop:] or [1]


class Dag(torch.nn.Module):
    """Applies the recorded ops in order, each to earlier values."""

    def __init__(self, plan, integer):
        super().__init__()
        self.plan = plan
        self.integer = integer

    def forward(self, *inputs):
        values = list(inputs)
        for kind, name, refs in self.plan:
            table = (INTEGER_UNARY if self.integer else UNARY) if kind == "u" else (
                INTEGER_BINARY if self.integer else BINARY)
            args = [values[r] for r in refs]
            try:
                out = table[name](*args)
            except RuntimeError:
                out = args[0]
            values.append(out)
        return values[-1], values[len(inputs) + len(self.plan) // 2]


class Stateful(torch.nn.Module):
    def __init__(self, shape, op):
        super().__init__()
        self.register_buffer("state", torch.zeros(shape))
        self.op = op

    def forward(self, x):
        self.state.add_(UNARY[self.op](x) * 0.5)
        return self.state * 2.0 + x


class Second(torch.nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return UNARY[self.op](x) - x


def make_inputs(rng: random.Random, shapes, integer, npr):
    out = []
    for s in shapes:
        if integer:
            out.append(torch.from_numpy(npr.integers(-9, 10, size=s).astype(rng.choice([np.int32, np.int64]))))
        else:
            scale = rng.choice([0.5, 1.0, 3.0])
            out.append(torch.from_numpy((npr.standard_normal(s) * scale).astype(np.float32)))
    return out


def dag_program(rng, npr):
    integer = rng.random() < 0.2
    shape = shape_for(rng)
    n_inputs = rng.choice([1, 1, 2, 3])
    shapes = [shape] + [broadcast_partner(rng, shape) if rng.random() < 0.5 else list(shape) for _ in range(n_inputs - 1)]
    inputs = make_inputs(rng, shapes, integer, npr)
    if integer:
        dtype = inputs[0].dtype
        inputs = [i.to(dtype) for i in inputs]
    if not integer and len(shape) == 4 and rng.random() < 0.4:
        inputs = [i.contiguous(memory_format=torch.channels_last) if i.dim() == 4 else i for i in inputs]
    plan = []
    count = len(inputs)
    for _ in range(rng.randint(2, 9)):
        if count >= 2 and rng.random() < 0.45:
            table = INTEGER_BINARY if integer else BINARY
            refs = [rng.randrange(count), rng.randrange(count)]
            plan.append(("b", rng.choice(sorted(table)), refs))
        else:
            table = INTEGER_UNARY if integer else UNARY
            plan.append(("u", rng.choice(sorted(table)), [rng.randrange(count)]))
        count += 1
    module = Dag(plan, integer)
    with torch.no_grad():
        module(*inputs)  # the plan must run eagerly before it is exported
    return {"forward": (module, inputs)}, {"forward": [inputs]}, {"kind": "dag", "plan": plan, "integer": integer,
                                                                  "channels_last": inputs[0].dim() == 4 and not inputs[0].is_contiguous()}


def stateful_program(rng, npr):
    shape = shape_for(rng)
    op = rng.choice(["relu", "tanh", "sigmoid", "exp", "square", "abs", "sin"])
    module = Stateful(shape, op)
    calls = [make_inputs(rng, [shape], False, npr) for _ in range(3)]
    return {"forward": (module, calls[0])}, {"forward": calls}, {"kind": "mutable_buffer", "op": op}


def dynamic_program(rng, npr):
    rows = rng.choice([4, 8, 16])
    cols = rng.choice(SIZES)
    op = rng.choice(sorted(UNARY))
    module = Second(op)
    example = make_inputs(rng, [[rows, cols]], False, npr)
    smaller = make_inputs(rng, [[rng.randint(1, rows), cols]], False, npr)
    dim = torch.export.Dim("n", min=1, max=rows)
    return {"forward": (module, example, {"x": {0: dim}})}, {"forward": [smaller, example]}, {"kind": "dynamic", "op": op,
                                                                                                "bound": rows}


def two_methods_program(rng, npr):
    shape = shape_for(rng)
    first, second = rng.sample(sorted(UNARY), 2)
    inputs = make_inputs(rng, [shape], False, npr)
    return ({"forward": (Second(first), inputs), "second": (Second(second), inputs)},
            {"forward": [inputs], "second": [make_inputs(rng, [shape], False, npr)]},
            {"kind": "two_methods", "ops": [first, second]})


def build(k: int, layers: bool = False):
    rng = random.Random(k * 7919 + 17)
    npr = np.random.default_rng(k)
    torch.manual_seed(k)
    if layers:
        return layer_program(rng, npr)
    roll = rng.random()
    if roll < 0.80:
        return dag_program(rng, npr)
    if roll < 0.88:
        return stateful_program(rng, npr)
    if roll < 0.94:
        return dynamic_program(rng, npr)
    return two_methods_program(rng, npr)


class Layers(torch.nn.Module):
    """A stack of layers applied in turn (the activations between them are functions)."""

    def __init__(self, layers, activations):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        self.activations = activations

    def forward(self, x):
        for layer, act in zip(self.layers, self.activations):
            x = layer(x)
            if act is not None:
                x = ACTIVATIONS[act](x)
        return x


ACTIVATIONS = {
    "relu": torch.relu,
    "gelu": torch.nn.functional.gelu,
    "hardtanh": torch.nn.functional.hardtanh,
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.1),
    "sigmoid": torch.sigmoid,
}


def layer_program(rng, npr):
    """A random stack of convolution, normalisation, pooling and resizing layers, each kept only
    where PyTorch runs it on the shape before it, then maybe a linear head."""
    one_d = rng.random() < 0.2
    c = rng.choice([1, 2, 3, 4, 6, 8])
    shape = [rng.choice([1, 1, 2]), c] + ([] if one_d else [rng.choice([5, 7, 8, 9, 12, 16])])
    shape.append(rng.choice([5, 7, 8, 9, 12, 16, 20]))
    input_shape = list(shape)
    layers, acts = [], []

    def divisors(k):
        return [d for d in range(1, k + 1) if k % d == 0]

    def draw(c):
        kind = rng.choice(["conv", "conv", "conv", "tconv", "bn", "gn", "ln", "in", "maxpool",
                           "avgpool", "adaptive", "upsample"])
        if kind in ("conv", "tconv"):
            groups = rng.choice(divisors(c))
            out_c = groups * rng.choice([1, 2, 3])
            k = rng.choice([1, 2, 3, 5])
            stride = rng.choice([1, 1, 2, 3])
            dilation = rng.choice([1, 1, 2])
            bias = rng.random() < 0.7
            if kind == "conv":
                cls = torch.nn.Conv1d if one_d else torch.nn.Conv2d
                return cls(c, out_c, k, stride=stride, padding=rng.randrange(0, k // 2 + 2),
                           dilation=dilation, groups=groups, bias=bias)
            out_pad = rng.randrange(0, max(stride, dilation)) if stride > 1 else 0
            cls = torch.nn.ConvTranspose1d if one_d else torch.nn.ConvTranspose2d
            return cls(c, out_c, k, stride=stride, padding=rng.randrange(0, (dilation * (k - 1)) // 2 + 1),
                       output_padding=out_pad, dilation=dilation, groups=groups, bias=bias)
        if kind == "bn":
            layer = (torch.nn.BatchNorm1d if one_d else torch.nn.BatchNorm2d)(c)
            with torch.no_grad():
                layer.running_mean.copy_(torch.from_numpy(npr.standard_normal(c).astype(np.float32)))
                layer.running_var.copy_(torch.from_numpy(npr.uniform(0.2, 3.0, c).astype(np.float32)))
                layer.weight.copy_(torch.from_numpy(npr.standard_normal(c).astype(np.float32)))
                layer.bias.copy_(torch.from_numpy(npr.standard_normal(c).astype(np.float32)))
            return layer
        if kind == "gn":
            return torch.nn.GroupNorm(rng.choice(divisors(c)), c, affine=rng.random() < 0.7)
        if kind == "ln":
            return torch.nn.LayerNorm(shape[-1:] if rng.random() < 0.5 or one_d else shape[-2:])
        if kind == "in":
            return (torch.nn.InstanceNorm1d if one_d else torch.nn.InstanceNorm2d)(c, affine=rng.random() < 0.5)
        if kind in ("maxpool", "avgpool"):
            k, stride = rng.choice([2, 3]), rng.choice([1, 2])
            pad, ceil = rng.randrange(0, k // 2 + 1), rng.random() < 0.3
            if kind == "maxpool":
                return (torch.nn.MaxPool1d if one_d else torch.nn.MaxPool2d)(k, stride, pad, ceil_mode=ceil)
            if one_d:
                return torch.nn.AvgPool1d(k, stride, pad, ceil_mode=ceil)
            return torch.nn.AvgPool2d(k, stride, pad, ceil_mode=ceil, count_include_pad=rng.random() < 0.5)
        if kind == "adaptive":
            size = rng.choice([1, 2, 3])
            return torch.nn.AdaptiveAvgPool1d(size) if one_d else torch.nn.AdaptiveAvgPool2d((size, rng.choice([1, 2, 3])))
        mode = rng.choice(["nearest", "bilinear"]) if not one_d else "nearest"
        return torch.nn.Upsample(scale_factor=2, mode=mode,
                                 **({"align_corners": rng.random() < 0.5} if mode == "bilinear" else {}))

    for _ in range(rng.randint(2, 6)):
        layer = draw(shape[1])
        try:
            with torch.no_grad():
                out = layer.eval()(torch.zeros(shape))
        except RuntimeError:
            continue  # not a shape this layer takes
        if out.numel() == 0 or out.numel() > 8192:
            continue
        layers.append(layer)
        acts.append(rng.choice([None, None, "relu", "gelu", "hardtanh", "leaky_relu", "sigmoid"]))
        shape = list(out.shape)
    if rng.random() < 0.5:
        layers.append(torch.nn.Sequential(torch.nn.Flatten(1), torch.nn.Linear(int(np.prod(shape[1:])), rng.choice([3, 10]))))
        acts.append(None)
    module = Layers(layers, acts).eval()
    scale = rng.choice([0.5, 1.0, 3.0])
    inputs = [torch.from_numpy((npr.standard_normal(input_shape) * scale).astype(np.float32))]
    with torch.no_grad():
        module(*inputs)
    return ({"forward": (module, inputs)}, {"forward": [inputs]},
            {"kind": "layers", "layers": [repr(layer) for layer in layers], "activations": acts})


def export(methods):
    exported = {}
    for name, spec in methods.items():
        module, inputs = spec[0], spec[1]
        dynamic = spec[2] if len(spec) > 2 else None
        exported[name] = torch.export.export(module, tuple(inputs), dynamic_shapes=dynamic, strict=False)
    return to_edge(exported).to_executorch()


def write_case(out: pathlib.Path, k: int, layers: bool = False) -> str:
    folder = out / f"{k:05d}"
    methods, calls, meta = build(k, layers)
    program = export(methods)
    runtime = Runtime.get()
    loaded = runtime.load_program(program.buffer)
    case = {"index": k, **meta, "methods": {}}
    files = {}
    for name, inputs_per_call in calls.items():
        method = loaded.load_method(name)
        record = []
        for c, inputs in enumerate(inputs_per_call):
            outputs = method.execute([i.clone() for i in inputs])
            entry = {"inputs": [], "outputs": []}
            for i, t in enumerate(inputs):
                path = f"{name}_call{c}_input{i}.npy"
                files[path] = t.contiguous().numpy()
                entry["inputs"].append(path)
            for i, t in enumerate(outputs):
                if not isinstance(t, torch.Tensor):
                    raise ValueError(f"output {i} is {type(t).__name__}, not a tensor")
                path = f"{name}_call{c}_output{i}.npy"
                files[path] = t.contiguous().numpy()
                entry["outputs"].append(path)
            record.append(entry)
        case["methods"][name] = record
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.pte").write_bytes(program.buffer)
    for path, array in files.items():
        np.save(folder / path, array)
    (folder / "case.json").write_text(json.dumps(case, indent=1))
    return meta["kind"]


def write_reference(out: pathlib.Path, k: int) -> bool:
    folder = out / f"{k:05d}"
    case_path = folder / "case.json"
    if not case_path.exists():
        return False
    case = json.loads(case_path.read_text())
    if case.get("kind") not in ("dag", "layers") or case.get("integer"):
        return False
    methods, calls, _ = build(k, case.get("kind") == "layers")
    module = methods["forward"][0]
    inputs = [t.double() for t in calls["forward"][0]]
    with torch.no_grad():
        outputs = module.double()(*inputs)
    names = []
    for i, t in enumerate(outputs):
        name = f"forward_call0_reference{i}.npy"
        np.save(folder / name, t.contiguous().numpy())
        names.append(name)
    case["methods"]["forward"][0]["references"] = names
    case_path.write_text(json.dumps(case, indent=1))
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--references", action="store_true", help="add float64 eager outputs to written programs")
    parser.add_argument("--layers", action="store_true", help="the layer-stack family (convolutions, norms, pooling)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.references:
        done = sum(write_reference(args.out, k) for k in range(args.first, args.first + args.count))
        print(json.dumps({"references": done}))
        return
    kinds, skipped = {}, 0
    for k in range(args.first, args.first + args.count):
        if (args.out / f"{k:05d}" / "case.json").exists():
            continue
        try:
            kind = write_case(args.out, k, args.layers)
            kinds[kind] = kinds.get(kind, 0) + 1
        except Exception as e:  # the exporter or ExecuTorch's runtime rejected it
            skipped += 1
            (args.out / f"{k:05d}.skipped").write_text(f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}")
    print(json.dumps({"written": kinds, "skipped": skipped}))


if __name__ == "__main__":
    main()
