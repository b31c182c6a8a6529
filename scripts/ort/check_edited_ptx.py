"""Runs triton::add from an ONNX Runtime library whose crate had one PTX file
edited after generation: the run must fail with the bridge's digest error
naming the variant (found without a GPU, before any driver call).

usage: python3 check_edited_ptx.py LIBRARY"""

import sys

import numpy as np
from onnx import TensorProto

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from check_add import add_model, expect_error, session  # noqa: E402


def main():
    sess = session(sys.argv[1], add_model(TensorProto.FLOAT))
    x = np.ones(8, dtype=np.float32)
    expect_error(
        "an edited PTX file",
        lambda: sess.run(None, {"x": x, "y": x}),
        "triton::add",
        "is not the one triton-opgen compiled",
        "generate it again",
    )


if __name__ == "__main__":
    main()
