// Loads a generated op library into a process with torch's CPU libraries and
// calls the op through the dispatcher: CPU tensors must raise the op's
// "must be a CUDA tensor" error (no GPU needed), Meta tensors must get
// outputs of the right shape, and bad inputs the op's messages.
// With the dot libraries too, dot's backward (through dot_nt and dot_tn) runs
// on Meta tensors: the gradients get their inputs' shapes.
// Usage: torch_cpu_harness ADD.so [DOT.so DOT_NT.so DOT_TN.so]; one line per case.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <dlfcn.h>
#include <cstdio>
#include <functional>
#include <string>

static void run_case(const char* name, const std::function<std::string()>& body) {
  try {
    std::printf("%s: ok %s\n", name, body().c_str());
  } catch (const c10::Error& e) {
    std::printf("%s: error %s\n", name, e.what_without_backtrace());
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* add_lib = nullptr;
  for (int i = 1; i < argc; ++i) {
    void* lib = dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      std::printf("dlopen failed: %s\n", dlerror());
      return 3;
    }
    if (i == 1) add_lib = lib;
  }
  // The module's pin_config entry: the bridge's rust::Error as its message.
  using pin_fn = int (*)(const char*, char*, size_t);
  if (auto pin = reinterpret_cast<pin_fn>(dlsym(add_lib, "triton_add_pin_config"))) {
    char err[512];
    const int rc = pin("SIZE=3", err, sizeof err);
    std::printf("pin_unknown: %d %s\n", rc, rc ? err : "");
  }
  auto add = c10::Dispatcher::singleton()
                 .findSchemaOrThrow("triton::add", "")
                 .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  std::printf("schema: %s\n", c10::toString(add.schema()).c_str());
  const auto meta = at::TensorOptions().device(at::kMeta);
  run_case("cpu", [&] { return c10::str(add.call(at::ones({8}), at::ones({8})).sizes()); });
  run_case("meta", [&] {
    auto z = add.call(at::empty({1000003}, meta), at::empty({1000003}, meta));
    return c10::str(z.sizes(), " ", z.device(), " ", z.scalar_type());
  });
  run_case("meta_half", [&] {
    auto z = add.call(at::empty({5}, meta.dtype(at::kHalf)), at::empty({5}, meta.dtype(at::kHalf)));
    return c10::str(z.scalar_type());
  });
  run_case("meta_shape", [&] { return c10::str(add.call(at::empty({8}, meta), at::empty({5}, meta)).sizes()); });
  run_case("meta_dtype", [&] {
    return c10::str(add.call(at::empty({8}, meta), at::empty({8}, meta.dtype(at::kHalf))).sizes());
  });
  run_case("meta_unsupported", [&] {
    return c10::str(add.call(at::empty({8}, meta.dtype(at::kDouble)), at::empty({8}, meta.dtype(at::kDouble))).sizes());
  });
  run_case("meta_rank", [&] { return c10::str(add.call(at::empty({2, 4}, meta), at::empty({2, 4}, meta)).sizes()); });
  if (argc > 2) {
    auto dot = c10::Dispatcher::singleton()
                   .findSchemaOrThrow("triton::dot", "")
                   .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    run_case("dot_backward_meta", [&] {
      auto a = at::empty({5, 7}, meta).requires_grad_();
      auto b = at::empty({7, 3}, meta).requires_grad_();
      auto c = dot.call(a, b);
      torch::autograd::backward({c}, {at::empty({5, 3}, meta)});
      return c10::str(c.sizes(), " ", a.grad().sizes(), " ", b.grad().sizes());
    });
    run_case("dot_inner_dim", [&] {
      return c10::str(dot.call(at::empty({5, 7}, meta), at::empty({6, 3}, meta)).sizes());
    });
  }
  return 0;
}
