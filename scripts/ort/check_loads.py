"""Loads a triton-opgen ONNX Runtime library for any op and checks what a
machine without a GPU can: registration, the outputs' inferred dtype and
symbolic dims, and the "no CUDA device" error when the node runs.

usage: python3 check_loads.py DESCRIPTION.json
DESCRIPTION: {"lib", "domain", "name", "qualified",
              "inputs": [{"name", "dims": ["M", 4, ...]}], "outputs": [...],
              "reject" (optional): {"shapes": {input: shape}, "needles": [text]},
              "empty" (optional): {"shapes": {input: shape}, "outputs": [shape]}}
(every input and output float32). Prints `ok: ...` lines; exits non-zero on failure."""

import json
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main():
    desc = json.load(open(sys.argv[1]))
    inputs, outputs = desc["inputs"], desc["outputs"]
    node = helper.make_node(
        desc["name"],
        [t["name"] for t in inputs],
        [t["name"] for t in outputs],
        domain=desc["domain"],
    )
    graph = helper.make_graph(
        [node],
        desc["name"],
        [helper.make_tensor_value_info(t["name"], TensorProto.FLOAT, t["dims"]) for t in inputs],
        [helper.make_tensor_value_info(t["name"], TensorProto.FLOAT, None) for t in outputs],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(desc["domain"], 1)],
    )
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.register_custom_ops_library(desc["lib"])
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    q = desc["qualified"]
    print(f"ok: {q}: registered, session created")
    for got, want in zip(sess.get_outputs(), outputs):
        if got.type != "tensor(float)" or list(got.shape) != want["dims"]:
            sys.exit(f"FAIL {q}: output {got.name} is {got.type} {got.shape}, want {want['dims']}")
        print(f"ok: {q}: output {got.name} inferred as {got.type} {got.shape}")
    # Distinct sizes per symbol, so a swapped dim would show.
    sizes = {}
    feeds = {}
    for t in inputs:
        shape = [d if isinstance(d, int) else sizes.setdefault(d, 3 + 2 * len(sizes)) for d in t["dims"]]
        feeds[t["name"]] = np.ones(shape, dtype=np.float32)
    expect_error(q, "run reports no CUDA device", lambda: sess.run(None, feeds), ["no CUDA device", q])
    # An empty input (a matmul over K = 0) launches nothing: the outputs are
    # zeros, as numpy's, with or without a GPU.
    empty = desc.get("empty")
    if empty:
        feeds = {n: np.ones(shape, dtype=np.float32) for n, shape in empty["shapes"].items()}
        got = sess.run(None, feeds)
        for out, shape in zip(got, empty["outputs"]):
            if list(out.shape) != shape or np.any(out != 0):
                sys.exit(f"FAIL {q}: empty input: output of shape {list(out.shape)}, want zeros of {shape}; got {out.ravel()[:8]}")
        print(f"ok: {q}: an empty input gives zero outputs {empty['outputs']}")
    # Inputs no compiled config accepts are refused before looking for a GPU.
    reject = desc.get("reject")
    if reject:
        bad = {n: np.ones(shape, dtype=np.float32) for n, shape in reject["shapes"].items()}
        expect_error(q, "inputs no config accepts", lambda: sess.run(None, bad), reject["needles"] + ["INVALID_ARGUMENT"])


def expect_error(q, what, fn, needles):
    try:
        fn()
    except Exception as e:
        missing = [n for n in needles if n not in str(e)]
        if missing:
            sys.exit(f"FAIL {q}: {what}: the error lacks {missing}: {e}")
        print(f"ok: {q}: {what}: {str(e).strip().splitlines()[-1][-160:]}")
        return
    sys.exit(f"FAIL {q}: {what}: no error")


if __name__ == "__main__":
    main()
