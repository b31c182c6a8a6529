"""Checks a triton-opgen ONNX Runtime library for triton::add on a machine
without a GPU: it loads and registers, shape/type inference gives the output
its dtype and symbolic dim, running reports the missing CUDA device, and a
wrong dtype is refused with a message naming the argument.

usage: python3 check_add.py LIBRARY
Prints one `ok: ...` line per check; exits non-zero on the first failure."""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def add_model(elem_type, out_type=None, dims=("N",)):
    node = helper.make_node("add", ["x", "y"], ["z"], domain="triton")
    graph = helper.make_graph(
        [node],
        "triton_add",
        [
            helper.make_tensor_value_info("x", elem_type, list(dims)),
            helper.make_tensor_value_info("y", elem_type, list(dims)),
        ],
        # The output's type is left to the op's inference.
        [helper.make_tensor_value_info("z", out_type or elem_type, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)],
    )
    model.ir_version = 8
    return model.SerializeToString()


def session(lib, model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # the checks print the errors they expect
    opts.register_custom_ops_library(lib)
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def expect_error(what, fn, *needles):
    try:
        fn()
    except Exception as e:  # onnxruntime raises its own exception classes
        text = str(e)
        missing = [n for n in needles if n not in text]
        if missing:
            sys.exit(f"FAIL {what}: the error lacks {missing}: {text}")
        print(f"ok: {what}: {text.strip().splitlines()[-1][:200]}")
        return
    sys.exit(f"FAIL {what}: no error")


def main():
    lib = sys.argv[1]
    sess = session(lib, add_model(TensorProto.FLOAT))
    print("ok: library loaded, triton::add registered, float32 session created")
    out = sess.get_outputs()[0]
    if out.type != "tensor(float)":
        sys.exit(f"FAIL inference: output type {out.type}")
    print(f"ok: output z inferred as {out.type} {out.shape}")
    sess16 = session(lib, add_model(TensorProto.FLOAT16))
    if sess16.get_outputs()[0].type != "tensor(float16)":
        sys.exit(f"FAIL inference: float16 output {sess16.get_outputs()[0].type}")
    print("ok: float16 variant group accepted, output float16")
    x = np.arange(8, dtype=np.float32)
    expect_error(
        "run without a GPU",
        lambda: sess.run(None, {"x": x, "y": x}),
        "triton::add",
        "no CUDA device",
    )
    # float64 is not among the spec's dtypes. The op's inference rejects it
    # too, but onnxruntime 1.31 drops the status InferOutputShapeFn returns,
    # so the error surfaces when the kernel runs.
    x64 = x.astype(np.float64)
    expect_error(
        "float64 inputs at run time",
        lambda: session(lib, add_model(TensorProto.DOUBLE)).run(None, {"x": x64, "y": x64}),
        "input `x`",
        "float64",
    )
    # Shapes that disagree reach the op at run time (N is symbolic in the model).
    expect_error(
        "mismatched lengths",
        lambda: sess.run(None, {"x": x, "y": np.zeros(5, dtype=np.float32)}),
        "input `y`",
        "N = 5",
    )
    x2 = np.zeros((2, 4), dtype=np.float32)
    expect_error(
        "rank 2 inputs",
        lambda: session(lib, add_model(TensorProto.FLOAT, dims=("A", "B"))).run(
            None, {"x": x2, "y": x2}
        ),
        "input `x` must have rank 1",
    )
    print("ort checks: all passed")


if __name__ == "__main__":
    main()
