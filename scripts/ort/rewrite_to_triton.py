"""Rewrites an ONNX model so its MatMul and Softmax nodes run as triton-opgen
ops (`triton::dot`, `triton::softmax`), for serving with the libraries that
`triton-opgen --framework ort` builds.

usage: python3 rewrite_to_triton.py IN.onnx OUT.onnx [--ops dot,softmax[,dot_nt]]

What is rewritten (shapes from ONNX shape inference):
  - MatMul of a rank-2 A and a rank-2 B -> triton::dot(A, B);
  - MatMul of a rank-r A (r > 2) and a rank-2 B -> A reshaped to [-1, K],
    triton::dot, the result reshaped to A's leading dims + [N];
  - Softmax over the last axis -> triton::softmax (rank 2 as is; higher
    ranks reshaped to [-1, N] and back);
  - with `dot_nt` in --ops: MatMul(A, Transpose(B)) of rank-2 operands, the
    transpose read by nothing else -> triton::dot_nt(A, B) (A B^T), one node
    instead of two (each node costs host time on ORT's CUDA EP; dot_nt's
    kernel is not pipelined yet, so on the GPU it is slower than the pair).
Left as they are, and listed: batched MatMuls (both operands rank > 2: the
dot op is 2-D), Softmax over another axis, and nodes of other element types
than float16/float32 (the ops' dtypes). Prints one line per node.
"""

import argparse
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

import numpy as np

DOMAIN = "triton"
DTYPES = {TensorProto.FLOAT, TensorProto.FLOAT16}


class Shapes:
    """Rank and element type of every value, from shape inference."""

    def __init__(self, model):
        inferred = shape_inference.infer_shapes(model)
        graph = inferred.graph
        self.info = {}
        for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                self.info[vi.name] = (len(t.shape.dim), t.elem_type)
        for init in graph.initializer:
            self.info[init.name] = (len(init.dims), init.data_type)

    def rank(self, name):
        return self.info.get(name, (None, None))[0]

    def dtype(self, name):
        return self.info.get(name, (None, None))[1]


class Rewriter:
    def __init__(self, model, ops):
        self.model = model
        self.ops = ops
        self.shapes = Shapes(model)
        self.new_inits = []
        self.counter = 0
        self.report = []
        # Transpose nodes folded into a dot_nt, by output name.
        self.folded = set()
        self.consumers = {}
        self.producers = {}
        for node in model.graph.node:
            for name in node.input:
                self.consumers[name] = self.consumers.get(name, 0) + 1
            for name in node.output:
                self.producers[name] = node

    def fresh(self, base):
        self.counter += 1
        return f"{base}__triton{self.counter}"

    def const(self, base, values):
        name = self.fresh(base)
        self.new_inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def flatten_to_2d(self, x, last_dim_from):
        """Nodes that reshape `x` to [-1, d] (d = last dim of `last_dim_from`)."""
        nodes = []
        last_shape = self.fresh("shape")
        nodes.append(helper.make_node("Shape", [last_dim_from], [last_shape], start=-1))
        two_d = self.fresh("shape2d")
        nodes.append(helper.make_node("Concat", [self.const("minus1", [-1]), last_shape], [two_d], axis=0))
        flat = self.fresh(f"{x}_2d")
        nodes.append(helper.make_node("Reshape", [x, two_d], [flat]))
        return nodes, flat

    def restore_shape(self, y2d, lead_from, last_from, out):
        """Nodes that reshape `y2d` to lead_from's leading dims + last_from's last dim."""
        nodes = []
        lead = self.fresh("lead")
        nodes.append(helper.make_node("Shape", [lead_from], [lead], end=-1))
        last = self.fresh("last")
        nodes.append(helper.make_node("Shape", [last_from], [last], start=-1))
        full = self.fresh("fullshape")
        nodes.append(helper.make_node("Concat", [lead, last], [full], axis=0))
        nodes.append(helper.make_node("Reshape", [y2d, full], [out]))
        return nodes

    def matmul(self, node):
        a, b = node.input
        ra, rb = self.shapes.rank(a), self.shapes.rank(b)
        dtype = self.shapes.dtype(a)
        if "dot" not in self.ops or dtype not in DTYPES or rb != 2 or ra is None or ra < 2:
            why = "batched (B has rank > 2)" if rb and rb > 2 else f"ranks {ra}/{rb}, dtype {dtype}"
            self.report.append(f"kept MatMul {node.name or node.output[0]}: {why}")
            return [node]
        transposed = self.plain_transpose(b)
        if ra == 2 and "dot_nt" in self.ops and transposed is not None:
            self.folded.add(b)
            self.report.append(f"dot_nt  MatMul {node.name or node.output[0]} (its Transpose folded in)")
            return [helper.make_node("dot_nt", [a, transposed], list(node.output), name=node.name, domain=DOMAIN)]
        if ra == 2:
            self.report.append(f"dot     MatMul {node.name or node.output[0]}")
            return [helper.make_node("dot", [a, b], list(node.output), name=node.name, domain=DOMAIN)]
        nodes, a2 = self.flatten_to_2d(a, a)
        c2 = self.fresh(f"{node.output[0]}_2d")
        nodes.append(helper.make_node("dot", [a2, b], [c2], name=node.name, domain=DOMAIN))
        nodes += self.restore_shape(c2, a, b, node.output[0])
        self.report.append(f"dot     MatMul {node.name or node.output[0]} (rank {ra} A reshaped to 2-D)")
        return nodes

    def plain_transpose(self, name):
        """The input of the rank-2 Transpose that produces `name`, when nothing
        else reads `name`; else None."""
        node = self.producers.get(name)
        if node is None or node.op_type != "Transpose" or node.domain not in ("", "ai.onnx"):
            return None
        perm = next((list(a.ints) for a in node.attribute if a.name == "perm"), [1, 0])
        if perm != [1, 0] or self.shapes.rank(node.input[0]) != 2 or self.consumers.get(name) != 1:
            return None
        return node.input[0]

    def softmax(self, node):
        x = node.input[0]
        rank = self.shapes.rank(x)
        axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
        dtype = self.shapes.dtype(x)
        last = rank is not None and axis in (-1, rank - 1)
        if "softmax" not in self.ops or dtype not in DTYPES or not last or rank < 2:
            self.report.append(f"kept Softmax {node.name or node.output[0]}: axis {axis}, rank {rank}, dtype {dtype}")
            return [node]
        if rank == 2:
            self.report.append(f"softmax Softmax {node.name or node.output[0]}")
            return [helper.make_node("softmax", [x], list(node.output), name=node.name, domain=DOMAIN)]
        nodes, x2 = self.flatten_to_2d(x, x)
        y2 = self.fresh(f"{node.output[0]}_2d")
        nodes.append(helper.make_node("softmax", [x2], [y2], name=node.name, domain=DOMAIN))
        whole = self.fresh("shape")
        nodes.append(helper.make_node("Shape", [x], [whole]))
        nodes.append(helper.make_node("Reshape", [y2, whole], [node.output[0]]))
        self.report.append(f"softmax Softmax {node.name or node.output[0]} (rank {rank} reshaped to 2-D)")
        return nodes

    def run(self):
        graph = self.model.graph
        out_nodes = []
        for node in graph.node:
            if node.domain in ("", "ai.onnx") and node.op_type == "MatMul":
                out_nodes += self.matmul(node)
            elif node.domain in ("", "ai.onnx") and node.op_type == "Softmax":
                out_nodes += self.softmax(node)
            else:
                out_nodes.append(node)
        out_nodes = [n for n in out_nodes if not (n.op_type == "Transpose" and n.output[0] in self.folded)]
        del graph.node[:]
        graph.node.extend(out_nodes)
        graph.initializer.extend(self.new_inits)
        if not any(o.domain == DOMAIN for o in self.model.opset_import):
            self.model.opset_import.append(helper.make_opsetid(DOMAIN, 1))
        return self.model


def rewrite(model, ops=("dot", "softmax")):
    """Returns (the rewritten model, one report line per MatMul/Softmax)."""
    r = Rewriter(model, set(ops))
    return r.run(), r.report


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--ops", default="dot,softmax",
                   help="which ops to use: dot, softmax, dot_nt (default: dot,softmax)")
    args = p.parse_args(argv)
    ops = {o.strip() for o in args.ops.split(",") if o.strip()}
    unknown = ops - {"dot", "softmax", "dot_nt"}
    if unknown:
        p.error(f"unknown op(s) {sorted(unknown)}; choose from dot, softmax, dot_nt")
    try:
        model = onnx.load(args.input)
    except Exception as e:  # onnx raises several kinds
        sys.exit(f"error: cannot read {args.input}: {e}")
    model, report = rewrite(model, ops)
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    for line in report:
        print(line)
    rewritten = sum(1 for line in report if not line.startswith("kept"))
    print(f"{rewritten} of {len(report)} MatMul/Softmax nodes now run as triton ops; wrote {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
