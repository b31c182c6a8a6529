"""Checks rewrite_to_triton.py on a machine without a GPU.

usage: python3 check_rewrite.py [DOT_LIBRARY SOFTMAX_LIBRARY]

1. A model with every case the rewriter meets (rank-2 MatMul, rank-3 A times a
   rank-2 weight, a batched MatMul, Softmax over the last axis of rank 2 and
   rank 4, Softmax over axis 0) is rewritten: the right nodes become
   triton::dot / triton::softmax, the others are kept.
2. The reshapes around the new nodes are right: with the triton nodes mapped
   back to ONNX's MatMul/Softmax, onnxruntime (CPU) gives the original model's
   outputs, at two sequence lengths.
3. With the libraries given, the rewritten model opens in an onnxruntime
   session with both registered (their shape inference accepts every node),
   and inferred output dims carry the graph's names (S), never the spec's
   (M, N): ORT takes equal names for equal sizes across the graph, so two
   dot outputs both named [M, N] would share buffers of different sizes.
Prints `ok: ...` lines; exits non-zero on the first failure."""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rewrite_to_triton import rewrite  # noqa: E402

D, F = 16, 24


def model_with_every_case():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((D, F)).astype(np.float32), "w")
    w2 = numpy_helper.from_array(rng.standard_normal((F, D)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm2d"),  # [S,D]x[D,F]
        helper.make_node("Softmax", ["h"], ["p"], name="sm2d", axis=-1),
        helper.make_node("MatMul", ["x3", "w"], ["h3"], name="mm3d"),  # [B,S,D]x[D,F]
        helper.make_node("MatMul", ["h3", "w2"], ["g3"], name="mm3d_b"),  # [B,S,F]x[F,D]
        helper.make_node("Transpose", ["x3"], ["x3t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x3", "x3t"], ["s3"], name="batched"),  # [B,S,S]
        helper.make_node("Unsqueeze", ["s3", "one"], ["s4"]),  # [B,1,S,S]
        helper.make_node("Softmax", ["s4"], ["p4"], name="sm4d", axis=3),
        helper.make_node("Softmax", ["h"], ["p0"], name="sm_axis0", axis=0),
        helper.make_node("Transpose", ["x"], ["xt"], name="xt", perm=[1, 0]),
        helper.make_node("MatMul", ["x", "xt"], ["s2"], name="qk"),  # [S,D]x[D,S]: dot_nt(x, x)
    ]
    graph = helper.make_graph(
        nodes,
        "every_case",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", D]),
            helper.make_tensor_value_info("x3", TensorProto.FLOAT, [2, "S", D]),
        ],
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, [f"{n}{i}" for i in range(rank)])
            for n, rank in (("p", 2), ("g3", 3), ("p4", 4), ("p0", 2), ("s2", 2))
        ],
        [w, w2, numpy_helper.from_array(np.array([1], dtype=np.int64), "one")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def back_to_onnx(model):
    """The rewritten model with triton::dot -> MatMul, triton::dot_nt -> Gemm
    with B transposed, triton::softmax -> Softmax."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for node in m.graph.node:
        if node.domain == "triton":
            node.domain = ""
            op = node.op_type
            node.op_type = {"dot": "MatMul", "dot_nt": "Gemm", "softmax": "Softmax"}[op]
            if op == "softmax":
                node.attribute.append(helper.make_attribute("axis", -1))
            if op == "dot_nt":
                node.attribute.append(helper.make_attribute("transB", 1))
    return m


def check_dim_names(so):
    """x[S, D] -> dot(x, w) = h[S, D]; dot(h, h^T) = s[S, S]."""
    w = numpy_helper.from_array(np.eye(D, dtype=np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("dot", ["x", "w"], ["h"], domain="triton"),
            helper.make_node("Transpose", ["h"], ["ht"], perm=[1, 0]),
            helper.make_node("dot", ["h", "ht"], ["s"], domain="triton"),
        ],
        "names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", D])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("h", "s")],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    shapes = {o.name: list(o.shape) for o in sess.get_outputs()}
    if shapes != {"h": ["S", D], "s": ["S", "S"]}:
        fail(f"inferred dims {shapes}, want h ['S', {D}] and s ['S', 'S']")
    print(f"ok: inferred dims carry the graph's names: {shapes}")


def fail(msg):
    sys.exit(f"FAIL {msg}")


def main():
    original = model_with_every_case()
    rewritten, report = rewrite(model_with_every_case())
    onnx.checker.check_model(rewritten)
    kinds = {n.name: (n.domain, n.op_type) for n in rewritten.graph.node if n.name}
    want = {
        "mm2d": ("triton", "dot"),
        "sm2d": ("triton", "softmax"),
        "mm3d": ("triton", "dot"),
        "mm3d_b": ("triton", "dot"),
        "batched": ("", "MatMul"),
        "sm4d": ("triton", "softmax"),
        "sm_axis0": ("", "Softmax"),
        "qk": ("triton", "dot"),
        "xt": ("", "Transpose"),
    }
    for name, kind in want.items():
        if kinds.get(name) != kind:
            fail(f"node {name}: {kinds.get(name)}, want {kind}\n" + "\n".join(report))
    kept = [line for line in report if line.startswith("kept")]
    if len(kept) != 2:
        fail(f"report: {report}")
    print(f"ok: rewritten {len(report) - len(kept)} nodes, kept {len(kept)} (batched MatMul, Softmax axis 0)")

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    ref = ort.InferenceSession(original.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    back = ort.InferenceSession(back_to_onnx(rewritten).SerializeToString(), opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    with_nt, report_nt = rewrite(model_with_every_case(), ("dot", "softmax", "dot_nt"))
    onnx.checker.check_model(with_nt)
    kinds_nt = {n.name: (n.domain, n.op_type) for n in with_nt.graph.node if n.name}
    if kinds_nt.get("qk") != ("triton", "dot_nt") or "xt" in kinds_nt:
        fail(f"dot_nt: qk is {kinds_nt.get('qk')}, Transpose xt {'kept' if 'xt' in kinds_nt else 'folded'}")
    print(f"ok: with dot_nt, MatMul(x, Transpose(x)) is one dot_nt node: {[r for r in report_nt if 'dot_nt' in r]}")
    back_nt = ort.InferenceSession(back_to_onnx(with_nt).SerializeToString(), opts, providers=["CPUExecutionProvider"])
    outputs = ("p", "g3", "p4", "p0", "s2")
    for s in (5, 33):
        feeds = {
            "x": rng.standard_normal((s, D)).astype(np.float32),
            "x3": rng.standard_normal((2, s, D)).astype(np.float32),
        }
        want = ref.run(None, feeds)
        for model_name, sess in (("rewritten", back), ("with dot_nt", back_nt)):
            for name, a, b in zip(outputs, want, sess.run(None, feeds)):
                if a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-4):
                    fail(f"{model_name} S={s} output {name}: shapes {a.shape} vs {b.shape}, max diff {np.abs(a - b).max()}")
    print("ok: the reshapes around the triton nodes keep every output (S = 5 and 33, with and without dot_nt)")

    if len(sys.argv) > 2:
        so = ort.SessionOptions()
        so.log_severity_level = 3
        for lib in sys.argv[1:3]:
            so.register_custom_ops_library(lib)
        sess = ort.InferenceSession(rewritten.SerializeToString(), so, providers=["CPUExecutionProvider"])
        outs = [o.name for o in sess.get_outputs()]
        print(f"ok: the rewritten model opens with the dot and softmax libraries (outputs {outs})")
        check_dim_names(so)
    print("rewrite checks: all passed")


if __name__ == "__main__":
    main()
