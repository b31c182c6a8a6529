// Calls the runtime bridge through the header a build folder ships, as a
// generated op does, and prints what arrives: opgen/tests/bridge_cxx.rs
// checks the lines. Built into a shared library with the archive's symbols
// hidden (-Wl,--exclude-libs,ALL), like an op library; needs no GPU (every
// error here comes before a device is opened).
#include <cstdio>
#include <string>

#include "opgen_bridge.h"

namespace {

const unsigned char image[] = ".version 8.0\n";
const char* const json = R"({"file":"x","kernel":"add","num_warps":4,"params":[]})";
const opgen::Variant good[] = {
    {"add", "SIZE=128", json, {image, sizeof image - 1}},
    {"add", "SIZE=256", json, {image, sizeof image - 1}},
};
const opgen::Variant broken[] = {{"add", "SIZE=128", "{not json", {image, sizeof image - 1}}};

// Text of a rust::String. Not its `operator std::string`: that is compiled
// into the archive with the C++11 ABI only, as generated ops avoid it too.
std::string text(const rust::String& s) { return std::string(s.data(), s.size()); }

// Runs `call`, printing `label: ` and the rust::Error's message, or `ok`.
template <typename Call>
void report(const char* label, Call call) {
  try {
    call();
    std::printf("%s: ok\n", label);
  } catch (const rust::Error& e) {
    std::printf("%s: %s\n", label, e.what());
  } catch (const std::exception& e) {
    std::printf("%s: not a rust::Error: %s\n", label, e.what());
  }
}

void launch(const opgen::Op& op) {
  const uint32_t candidates[] = {0};
  const opgen::Grid grids[] = {{1, 1, 1, false}};
  const opgen::Arg args[] = {{opgen::ArgKind::I32, 7}};
  const int64_t dims[] = {7};
  const int64_t key[] = {0, 7};
  opgen::launch(op, 0, 0, rust::Slice<const uint32_t>(candidates, 1), rust::Slice<const opgen::Grid>(grids, 1),
                rust::Slice<const opgen::Arg>(args, 1), "T=float32", rust::Slice<const int64_t>(dims, 1),
                rust::Slice<const int64_t>(key, 2));
}

// Whether the fast path launched a call of key {0, 7}.
void known(const char* label, const opgen::Op& op) {
  const opgen::Arg args[] = {{opgen::ArgKind::I32, 7}};
  const int64_t key[] = {0, 7};
  report(label, [&] {
    const bool launched = opgen::launch_known(op, 0, 0, rust::Slice<const int64_t>(key, 2), rust::Slice<const opgen::Arg>(args, 1));
    std::printf("%s launched: %d\n", label, launched ? 1 : 0);
  });
}

}  // namespace

extern "C" int opgen_check() {
  rust::Box<opgen::Op> op = opgen::new_op("t::add", rust::Slice<const opgen::Variant>(good, 2));
  std::string configs;
  for (const rust::String& config : opgen::configs(*op)) configs += text(config) + ";";
  std::printf("configs: %s\n", configs.c_str());
  std::printf("last_config: '%s'\n", text(opgen::last_config(*op)).c_str());
  std::printf("preload: %zu\n", opgen::preload(*op, "not json"));
  // Nothing decided yet: the caller computes the candidates.
  known("known_first", *op);
  report("pin_unknown", [&] { opgen::pin_config(*op, "SIZE=512"); });
  report("pin", [&] { opgen::pin_config(*op, "SIZE=256"); });
  // The call admits variant 0 (SIZE=128) only.
  report("launch_pinned", [&] { launch(*op); });
  report("unpin", [&] { opgen::pin_config(*op, ""); });
  std::printf("benchmark_calls: %llu\n", static_cast<unsigned long long>(opgen::benchmark_calls(*op)));
  rust::Box<opgen::Op> bad = opgen::new_op("t::bad", rust::Slice<const opgen::Variant>(broken, 1));
  report("launch_broken", [&] { launch(*bad); });
  known("known_broken", *bad);
  return 0;
}
