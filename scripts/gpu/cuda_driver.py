"""Minimal CUDA driver access through ctypes: load PTX produced by tritonc and
launch it on torch tensors, on torch's current stream, or (without torch, e.g.
next to TensorFlow) on raw device buffers of the primary context.

Used by the GPU checks that run on the device machine, where torch exists but
no Rust toolchain does. Every driver call is checked; a failure raises
`CudaError` with the driver's own error name.
"""

import ctypes
import json
import os

_lib = None


class CudaError(RuntimeError):
    pass


def _driver():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL("libcuda.so.1")
        _check(_lib.cuInit(0), "cuInit")
    return _lib


def _check(status, what):
    if status != 0:
        name = ctypes.c_char_p()
        _lib.cuGetErrorName(status, ctypes.byref(name))
        raise CudaError(f"{what} failed: {name.value.decode() if name.value else status}")


CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NUM_REGS = 4


def bind_primary_context(device=0):
    """Makes device `device`'s primary context current on this thread (what
    torch and TensorFlow use), without torch."""
    lib = _driver()
    dev = ctypes.c_int()
    _check(lib.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


class Buffer:
    """Device memory of the current context, freed with the object: zeroed, or
    a copy of `host` (a contiguous numpy array)."""

    def __init__(self, nbytes, host=None):
        nbytes = max(nbytes if host is None else host.nbytes, 1)
        self.ptr = ctypes.c_uint64()
        _check(_driver().cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        if host is None:
            _check(_driver().cuMemsetD8_v2(self.ptr, 0, ctypes.c_size_t(nbytes)), "cuMemsetD8")
        else:
            _check(_driver().cuMemcpyHtoD_v2(self.ptr, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(nbytes)),
                   "cuMemcpyHtoD")

    def data_ptr(self):
        return self.ptr.value

    def __del__(self):
        if _lib is not None and self.ptr.value:
            _lib.cuMemFree_v2(self.ptr)


def time_ms(fn, iters):
    """Mean milliseconds of `fn` (launches on the default stream) over `iters`
    calls, between two CUDA events, after one untimed call."""
    lib = _driver()
    start, end = ctypes.c_void_p(), ctypes.c_void_p()
    _check(lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
    _check(lib.cuEventCreate(ctypes.byref(end), 0), "cuEventCreate")
    fn()
    _check(lib.cuEventRecord(start, None), "cuEventRecord")
    for _ in range(iters):
        fn()
    _check(lib.cuEventRecord(end, None), "cuEventRecord")
    _check(lib.cuEventSynchronize(end), "cuEventSynchronize")
    ms = ctypes.c_float()
    _check(lib.cuEventElapsedTime(ctypes.byref(ms), start, end), "cuEventElapsedTime")
    lib.cuEventDestroy_v2(start)
    lib.cuEventDestroy_v2(end)
    return ms.value / iters


class Kernel:
    """One PTX entry point plus what the manifest says about it."""

    def __init__(self, ptx_path, entry, torch_stream=True):
        """`torch_stream`: bind torch's context and launch on its current
        stream; otherwise the caller binds a context (bind_primary_context)
        and launches go on the default stream."""
        self.torch_stream = torch_stream
        if torch_stream:
            import torch

            torch.empty(1, device="cuda")  # creates and binds torch's primary context on this thread
        lib = _driver()
        with open(ptx_path, "rb") as f:
            ptx = f.read() + b"\0"
        self.module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(8192)
        # JIT options: error log buffer and its size.
        opts = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER, _SIZE_BYTES
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        status = lib.cuModuleLoadDataEx(ctypes.byref(self.module), ptx, 2, opts, vals)
        if status != 0:
            raise CudaError(f"cuModuleLoadDataEx({ptx_path}): {status}: {log.value.decode(errors='replace')}")
        self.func = ctypes.c_void_p()
        _check(lib.cuModuleGetFunction(ctypes.byref(self.func), self.module, entry["kernel"].encode()),
               "cuModuleGetFunction")
        self.entry = entry
        self.shared = int(entry.get("shared_bytes", 0))
        self.threads = 32 * int(entry.get("num_warps", 4))
        if self.shared > 48 * 1024:
            _check(lib.cuFuncSetAttribute(self.func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          self.shared), "cuFuncSetAttribute")
        regs = ctypes.c_int()
        _check(lib.cuFuncGetAttribute(ctypes.byref(regs), CU_FUNC_ATTRIBUTE_NUM_REGS, self.func),
               "cuFuncGetAttribute")
        self.registers = regs.value

    def __call__(self, grid, **args):
        """Launches on torch's current stream (or the default stream). `args`
        by parameter name: tensors or Buffers for pointers, Python ints/floats
        for scalars."""
        # What the runtime adds to a launch and this launcher does not: TMA
        # descriptors and a persistent tile count (trailing parameters the
        # manifest's `params` do not list: launched without them, the
        # driver reads past the argument array) and multicast clusters.
        extra = [what for what, on in (("TMA tensor maps", self.entry.get("tensor_maps")),
                                       ("a persistent grid", self.entry.get("persistent")),
                                       ("clusters along x", int(self.entry.get("cluster_x", 1)) > 1)) if on]
        if extra:
            raise ValueError(f"{self.entry.get('config', self.entry['kernel'])}: the raw launcher cannot pass "
                             f"{', '.join(extra)}; time it through the op")
        holders = []
        for p in self.entry["params"]:
            v = args[p["name"]]
            ty = p["type"]
            if ty.endswith("*"):
                holders.append(ctypes.c_void_p(v.data_ptr()))
            elif ty in ("i32", "i1", "i8", "i16"):
                holders.append(ctypes.c_int32(int(v)))
            elif ty == "i64":
                holders.append(ctypes.c_int64(int(v)))
            elif ty == "f32":
                holders.append(ctypes.c_float(float(v)))
            elif ty == "f64":
                holders.append(ctypes.c_double(float(v)))
            else:
                raise ValueError(f"unsupported parameter type {ty}")
        argv = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        gx, gy, gz = (list(grid) + [1, 1])[:3]
        # A split-K variant runs its programs of a tile along z, as the
        # runtime launches it (the op's grid has z = 1).
        splits = int(self.entry.get("cluster_splits", 1))
        if splits > 1:
            if gz != 1:
                raise ValueError(f"grid z = {gz}: a split-K variant needs z = 1")
            gz = splits
        stream = None
        if self.torch_stream:
            import torch

            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        _check(_driver().cuLaunchKernel(self.func, gx, gy, gz, self.threads, 1, 1, self.shared, stream,
                                        argv, None), "cuLaunchKernel")


def load_manifest(directory):
    """Kernels of a `tritonc --all-configs` output folder, keyed by macro values."""
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    entries = manifest["variants"] if isinstance(manifest, dict) else manifest
    return [(e, os.path.join(directory, e["file"])) for e in entries]


def variant_for(op_dir, config, dtypes):
    """The entry of `variants.json` in a generated op folder for this config
    and dtype group, and its PTX file."""
    with open(os.path.join(op_dir, "variants.json")) as f:
        for entry in json.load(f):
            if entry["config"] == config and entry["dtypes"] == dtypes:
                return entry, os.path.join(op_dir, entry["file"])
    raise KeyError(f"{op_dir}: no variant {config} for {dtypes}")
