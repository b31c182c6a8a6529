/* The C ABI between generated framework bindings and the opgen runtime
 * (plugins/bridge, a Rust static library). Plain C so that the prebuilt
 * library links with any C++ compiler and standard library. */
#ifndef OPGEN_BRIDGE_H
#define OPGEN_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One compiled variant, embedded in the generated library. */
typedef struct opgen_variant {
  const char* kernel;        /* entry point in the image */
  const char* config;        /* "SIZE=256 num_warps=4": the autotuner's name for it */
  const char* variant_json;  /* the manifest entry: macros, num_warps, shared_bytes, params */
  const unsigned char* image; /* PTX text (no NUL needed) or a cubin */
  size_t image_len;
} opgen_variant;

enum { OPGEN_ARG_PTR = 0, OPGEN_ARG_I32 = 1, OPGEN_ARG_I64 = 2, OPGEN_ARG_F32 = 3, OPGEN_ARG_F64 = 4 };

/* A kernel argument: `bits` holds the pointer, or the value's bits. */
typedef struct opgen_arg {
  uint32_t kind;
  uint32_t reserved;
  uint64_t bits;
} opgen_arg;

/* The bits of a float argument, for opgen_arg.bits (float: the low 32). */
static inline uint64_t opgen_f32_bits(double value) {
  float narrow = (float)value;
  uint32_t bits;
  memcpy(&bits, &narrow, sizeof bits);
  return bits;
}
static inline uint64_t opgen_f64_bits(double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

/* Programs per axis; `persistent` != 0: x is a work count, and the runtime
 * launches min(x, SMs x blocks per SM) programs. */
typedef struct opgen_grid {
  uint32_t x, y, z;
  uint32_t persistent;
} opgen_grid;

typedef struct opgen_op opgen_op;

/* Never fails and never returns NULL; problems are reported by launches.
 * `variants` must outlive the op (it is static data of the library). */
opgen_op* opgen_op_new(const char* name, const opgen_variant* variants, size_t count);

/* Launches one of `candidates` (indices into the variants) on `stream` of
 * `device`, with `grids[i]` for candidate i. With several candidates the
 * autotuner picks one, keyed by op, `dtype_key` and the bucketed `dims`, and
 * remembers it (in memory and in its JSON cache). Returns 0, or non-zero
 * with a message in `err` (always NUL-terminated when err_len > 0). */
int opgen_op_launch(opgen_op* op, int32_t device, void* stream, const uint32_t* candidates,
                    const opgen_grid* grids, size_t count, const opgen_arg* args, size_t nargs,
                    const char* dtype_key, const int64_t* dims, size_t ndims, char* err,
                    size_t err_len);

/* Takes the choices of a pre-tuned table for this op: the JSON of an
 * autotune cache file ({"format_version": 1, "entries": {key: {"config": ...}}}).
 * Keys name op, bucketed dims, dtypes and device; entries of other ops are
 * skipped. Returns how many were taken (0 for NULL, "" or bad JSON). */
size_t opgen_op_preload(opgen_op* op, const char* tuned_json);

/* The config the last launch of `op` used ("" before any), copied into buf. */
void opgen_op_last_config(opgen_op* op, char* buf, size_t len);

/* The op's distinct configs, one a line, copied into buf (truncated to len);
 * returns the bytes the whole list needs, without the NUL. */
size_t opgen_op_configs(opgen_op* op, char* buf, size_t len);

/* Pins `config` (one of opgen_op_configs): later launches run that variant
 * instead of the autotuner's pick, and fail for inputs it does not accept.
 * NULL or "" unpins. Returns 0, or non-zero with a message in `err`. */
int opgen_op_pin_config(opgen_op* op, const char* config, char* err, size_t err_len);

/* Configs `op` benchmarked in this process: 0 while every call was decided
 * from the autotune cache or a pre-tuned table. */
uint64_t opgen_op_benchmark_calls(opgen_op* op);

#ifdef __cplusplus
}
#endif

#endif /* OPGEN_BRIDGE_H */
