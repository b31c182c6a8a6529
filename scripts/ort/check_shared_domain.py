"""Two triton-opgen ONNX Runtime libraries in one session: a transpose ->
softmax model whose nodes come from two libraries that both use the domain
`triton` (onnxruntime refuses two domains of one name; the libraries share
one). Checks session creation, the output's inferred type and rank and, without
a GPU, the "no CUDA device" error of the first node.

usage: python3 check_shared_domain.py TRANSPOSE_LIB SOFTMAX_LIB"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def main():
    transpose_lib, softmax_lib = sys.argv[1], sys.argv[2]
    nodes = [
        helper.make_node("transpose", ["x"], ["t"], domain="triton"),
        helper.make_node("softmax", ["t"], ["y"], domain="triton"),
    ]
    graph = helper.make_graph(
        nodes,
        "transpose_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["R", "C"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.register_custom_ops_library(transpose_lib)
    opts.register_custom_ops_library(softmax_lib)
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    out = sess.get_outputs()[0]
    # Unknown dims carry the spec's symbols of the op that made them (softmax: M, N).
    if len(out.shape) != 2 or out.type != "tensor(float)":
        sys.exit(f"FAIL: output {out.type} {out.shape}, want a rank-2 tensor(float)")
    print(f"ok: two libraries, one `triton` domain: session created, y inferred as {out.type} {out.shape}")
    try:
        sess.run(None, {"x": np.ones((3, 5), dtype=np.float32)})
    except Exception as e:
        if "no CUDA device" in str(e) and "triton::transpose" in str(e):
            print("ok: run reports no CUDA device (triton::transpose)")
            return
        if "no CUDA device" not in str(e):
            sys.exit(f"FAIL: unexpected error: {e}")
    print("ok: ran (a GPU is present)")


if __name__ == "__main__":
    main()
