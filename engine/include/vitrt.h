/* SPDX-License-Identifier: Apache-2.0
 * Copyright the vitrt authors.
 *
 * vitrt.h — the C API of vitrt, an inference engine for efficient vision transformers.
 *
 * Usage:
 *
 *   vitrt_model_t* model = NULL;
 *   if (vitrt_model_load("deit_tiny.vitrt", &model) != VITRT_OK) {
 *     fprintf(stderr, "%s\n", vitrt_last_error_message());
 *     return 1;
 *   }
 *   vitrt_session_options_t opts = vitrt_session_default_options();
 *   opts.max_batch = 8;
 *   vitrt_session_t* session = NULL;
 *   vitrt_session_create(model, &opts, &session);
 *   float* x = ...;  // [batch, C, H, W], e.g. from vitrt_image_preprocess()
 *   float logits[8 * 1000];
 *   vitrt_session_run(session, x, batch, logits, 8 * 1000);
 *   vitrt_session_free(session);
 *   vitrt_model_free(model);
 *
 * Errors: every fallible call returns a vitrt_status_t (VITRT_OK = 0). The detail of the last failure on the
 * calling thread is in vitrt_last_error_message(); it names the file, tensor or op involved. The library
 * never aborts, never exits, and never lets a C++ exception escape.
 *
 * Thread safety: a model may be shared by any number of threads and sessions; a session must be used by one
 * thread at a time. Create one session per thread.
 */
#ifndef VITRT_H_
#define VITRT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VITRT_BUILDING_LIBRARY)
#define VITRT_API __attribute__((visibility("default")))
#else
#define VITRT_API
#endif

/* Version of this header's API; bumped on any change to it (see the README's changelog). Version 3 appended
 * model info, the plan report, .npy arrays, input limits, exit codes and four session options; version 4 the
 * session precision (fp32 | bf16) and the plan report's precision; version 6 the plan report's tiles. */
#define VITRT_API_VERSION 6

/* The most dimensions a model tensor has (the dims arrays of the info structs below). */
#define VITRT_MAX_RANK 8

typedef enum vitrt_status {
  VITRT_OK = 0,
  VITRT_ERR_INVALID_ARGUMENT = 1, /* a null pointer, an out-of-range option, a buffer too small */
  VITRT_ERR_BAD_MODEL = 2,        /* the model file is corrupt, truncated or inconsistent */
  VITRT_ERR_BAD_INPUT = 3,        /* an input (image, tensor, batch size) is unusable */
  VITRT_ERR_UNSUPPORTED = 4,      /* valid, but not supported by this build (op version, backend) */
  VITRT_ERR_OUT_OF_MEMORY = 5,
  VITRT_ERR_RUNTIME = 6, /* a failure while running */
  VITRT_ERR_IO = 7       /* a file could not be read */
} vitrt_status_t;

typedef enum vitrt_backend {
  VITRT_BACKEND_AUTO = 0, /* the fastest backend this machine has */
  VITRT_BACKEND_CPU = 1,  /* the best CPU backend */
  VITRT_BACKEND_REF = 2,  /* the portable reference backend (slow; the correctness oracle) */
  VITRT_BACKEND_CUDA = 3
} vitrt_backend_t;

/* API version 4. The arithmetic a session asks for. BF16: the CPU backend rounds the operands of Linear, of
 * plain attention's two products, of the fused conv MLP's two Linears, of channels-last convs on 128 or more
 * input channels and of one product each in SOFT's and LaViT's attention to bf16 and sums in fp32 where the
 * CPU has AVX512-BF16; every other op, and every backend or CPU without bf16 kernels, stays fp32
 * (vitrt_plan_info_t.precision says what runs; docs/architecture.md §7.1 lists the ops). */
typedef enum vitrt_precision { VITRT_PRECISION_FP32 = 0, VITRT_PRECISION_BF16 = 1 } vitrt_precision_t;

typedef struct vitrt_model vitrt_model_t;     /* immutable, shareable between threads */
typedef struct vitrt_session vitrt_session_t; /* one thread at a time */

typedef struct vitrt_session_options {
  size_t struct_size;      /* sizeof(vitrt_session_options_t); set by vitrt_session_default_options() */
  vitrt_backend_t backend; /* default VITRT_BACKEND_AUTO */
  int32_t num_threads;     /* default 1 */
  int32_t max_batch;       /* largest batch run() will get; memory is planned for it. Default 1 */
  /* The most memory the session may plan (activations + workspace), in bytes; a model needing more fails
   * session creation with VITRT_ERR_OUT_OF_MEMORY naming its largest tensor. Default 0: this machine's
   * physical memory. (API version 2: callers built against version 1 leave it at its default.) */
  uint64_t max_memory_bytes;
  /* API version 3 (callers built against an older header leave these at their defaults): */
  int32_t opt_level;           /* 0: run the graph as written; 1 (default): run the planner passes (fusion) */
  int32_t profile;             /* nonzero: accumulate each step's time across runs (vitrt_session_get_step) */
  const char* disabled_passes; /* comma-separated planner passes to skip, or "all"; NULL (default): none.
                                * Copied at creation. */
  int32_t preserve_intermediates; /* nonzero: no arena reuse, so every tensor is readable after a run
                                   * (vitrt_tensor_info_t.data); needs more memory. Default 0 */
  /* API version 4. reserved_v4 fills what was version 3's tail padding (its struct_size counts those bytes,
   * which an old caller never wrote): the library never reads it, so precision lies past any version-3
   * struct_size and an older caller gets the default. */
  int32_t reserved_v4;
  vitrt_precision_t precision; /* default VITRT_PRECISION_FP32; another value is VITRT_ERR_INVALID_ARGUMENT */
} vitrt_session_options_t;

/* The engine version, e.g. "0.1.0". Static storage; never free it. */
VITRT_API const char* vitrt_version(void);
/* The model file format version this build writes (it reads every version it lists as supported). */
VITRT_API uint32_t vitrt_format_version(void);

/* Message of the last failed call on this thread ("" if none). Valid until the next vitrt call on this
 * thread. */
VITRT_API const char* vitrt_last_error_message(void);

/* Loads and verifies a .vitrt file (memory-mapped; weights are used in place).
 * On success *out owns the model; free it with vitrt_model_free(). On failure *out is set to NULL. */
VITRT_API vitrt_status_t vitrt_model_load(const char* path, vitrt_model_t** out);

/* Loads a model from caller memory without copying it. `data` must be 64-byte aligned and must stay valid and
 * unchanged until the model and every session created from it are freed. */
VITRT_API vitrt_status_t vitrt_model_load_from_memory(const void* data, size_t size, vitrt_model_t** out);

/* Frees a model. Accepts NULL. Sessions hold their own reference: a model may be freed before its sessions.
 */
VITRT_API void vitrt_model_free(vitrt_model_t* model);

/* Input shape without batch: channels, height, width. Any pointer may be NULL. */
VITRT_API vitrt_status_t vitrt_model_input_shape(const vitrt_model_t* model, int32_t* channels,
                                                 int32_t* height, int32_t* width);
/* Number of classes (the width of the logits). */
VITRT_API int32_t vitrt_model_num_classes(const vitrt_model_t* model);
/* Label of class `index`, or NULL when out of range. Owned by the model. */
VITRT_API const char* vitrt_model_label(const vitrt_model_t* model, int32_t index);
/* Architecture name ("deit", "pvt_v2", ...). Owned by the model. */
VITRT_API const char* vitrt_model_arch(const vitrt_model_t* model);
/* A metadata value by key (e.g. "source.container"), or NULL. Owned by the model. */
VITRT_API const char* vitrt_model_metadata(const vitrt_model_t* model, const char* key);

/* Default options; always start from these so that new fields get their defaults. */
VITRT_API vitrt_session_options_t vitrt_session_default_options(void);

/* Plans memory and creates kernels for `model`. options may be NULL (defaults). The session keeps the model
 * alive. On failure *out is set to NULL. */
VITRT_API vitrt_status_t vitrt_session_create(const vitrt_model_t* model,
                                              const vitrt_session_options_t* options, vitrt_session_t** out);
/* Frees a session. Accepts NULL. */
VITRT_API void vitrt_session_free(vitrt_session_t* session);

/* Runs `batch` images (1 <= batch <= max_batch). input: float32 [batch, C, H, W], already preprocessed.
 * logits: room for `logits_capacity` floats, at least batch * num_classes. Performs no heap allocation. */
VITRT_API vitrt_status_t vitrt_session_run(vitrt_session_t* session, const float* input, int32_t batch,
                                           float* logits, size_t logits_capacity);

/* Bytes of memory the session planned: activation arena, scratch workspace, and mapped weights. */
VITRT_API vitrt_status_t vitrt_session_memory(const vitrt_session_t* session, uint64_t* activation_bytes,
                                              uint64_t* workspace_bytes, uint64_t* weight_bytes);

/* Decodes a PNG or JPEG file and preprocesses it as the model's metadata says (resize, centre crop,
 * normalisation) into dst, which must hold C*H*W floats (see vitrt_model_input_shape). */
VITRT_API vitrt_status_t vitrt_image_preprocess(const vitrt_model_t* model, const char* image_path,
                                                float* dst, size_t dst_capacity);
/* API version 5. The same for a PNG or JPEG file already in memory (`size` bytes at `data`); `name` (may be
 * NULL) is what messages call the image. */
VITRT_API vitrt_status_t vitrt_image_preprocess_memory(const vitrt_model_t* model, const void* data,
                                                       size_t size, const char* name, float* dst,
                                                       size_t dst_capacity);

/* API version 3. Info structs are filled by the library up to the caller's struct_size (set it to sizeof the
 * struct): a caller built against an older header gets the fields it knows. Strings and arrays they point to
 * are owned by the model or session queried and live as long as it. */

/* Exit codes of the vitrt command-line tools. */
typedef enum vitrt_exit_code {
  VITRT_EXIT_OK = 0,
  VITRT_EXIT_USAGE = 1,     /* a bad command line */
  VITRT_EXIT_BAD_MODEL = 2, /* the model file is unusable */
  VITRT_EXIT_BAD_INPUT = 3, /* an input image or tensor is unusable */
  VITRT_EXIT_RUNTIME = 4    /* a failure while running (out of memory, backend unavailable) */
} vitrt_exit_code_t;

/* The exit code a tool reports for `status`: VITRT_ERR_INVALID_ARGUMENT -> usage, VITRT_ERR_BAD_MODEL -> bad
 * model, VITRT_ERR_BAD_INPUT and VITRT_ERR_IO -> bad input, anything else -> runtime; VITRT_OK -> 0. (Every
 * failure to load a model file is the tools' "bad model", whatever its status.) */
VITRT_API int vitrt_exit_code(vitrt_status_t status);

/* Limits on untrusted input files; passing one is VITRT_ERR_BAD_INPUT naming the file and the limit. */
typedef struct vitrt_input_limits {
  size_t struct_size;
  uint64_t max_image_file_bytes; /* an image file larger than this is not read */
  int64_t max_image_pixels;      /* decoded, and after the resize to the model's shorter side */
  uint32_t max_png_side;
  int32_t max_jpeg_scans;
  uint64_t max_image_decode_bytes; /* decoder working memory (progressive JPEG, interlaced PNG) */
  uint64_t max_npy_file_bytes;
} vitrt_input_limits_t;
VITRT_API vitrt_status_t vitrt_get_input_limits(vitrt_input_limits_t* limits);

/* The backend named "auto", "cpu", "ref" or "cuda"; another name is VITRT_ERR_INVALID_ARGUMENT naming it. */
VITRT_API vitrt_status_t vitrt_backend_from_name(const char* name, vitrt_backend_t* out);
/* API version 4. The precision named "fp32" or "bf16"; another name is VITRT_ERR_INVALID_ARGUMENT naming it.
 */
VITRT_API vitrt_status_t vitrt_precision_from_name(const char* name, vitrt_precision_t* out);

/* What `vitrt inspect` prints about a model file. Shapes include the batch dimension, stored as -1. */
typedef struct vitrt_model_info {
  size_t struct_size;
  uint32_t format_version; /* of this file */
  int32_t num_classes;     /* the width of the logits */
  const char* producer;    /* the tool that wrote the file */
  const char* arch;        /* "deit", "pvt_v2", ... */
  const char* input_dtype; /* "float32": the input is float32 NCHW */
  int32_t input_rank;
  int32_t output_rank;
  int64_t input_dims[VITRT_MAX_RANK];
  int64_t output_dims[VITRT_MAX_RANK];
  int32_t num_labels;  /* vitrt_model_label(0 .. num_labels-1) */
  int32_t num_ops;     /* ops in the file (vitrt_model_op_type) */
  int32_t num_tensors; /* tensors in the file, weights included */
  int32_t num_weights; /* constant tensors */
  uint64_t weight_bytes;
  int32_t num_metadata; /* key/value pairs (vitrt_model_metadata_at) */
} vitrt_model_info_t;
VITRT_API vitrt_status_t vitrt_model_get_info(const vitrt_model_t* model, vitrt_model_info_t* info);
/* The type name of op `index` (file order), e.g. "SoftmaxAttention"; NULL when out of range. */
VITRT_API const char* vitrt_model_op_type(const vitrt_model_t* model, int32_t index);
/* Metadata pair `index` (0 .. num_metadata-1, sorted by key). */
VITRT_API vitrt_status_t vitrt_model_metadata_at(const vitrt_model_t* model, int32_t index, const char** key,
                                                 const char** value);

/* The model's evaluation preprocessing (what vitrt_image_preprocess does). */
typedef struct vitrt_preprocess_info {
  size_t struct_size;
  int32_t channels;       /* 3: RGB, 1: grayscale */
  int32_t resize_shorter; /* the shorter side after the resize */
  int32_t crop_height;    /* centre crop */
  int32_t crop_width;
  const char* interpolation; /* "bicubic", "bilinear" or "nearest" */
  int32_t num_mean;          /* channels values, or 1 for all channels */
  int32_t num_std;
  const float* mean; /* normalisation: (x / 255 - mean) / std */
  const float* std;
} vitrt_preprocess_info_t;
VITRT_API vitrt_status_t vitrt_model_get_preprocess(const vitrt_model_t* model,
                                                    vitrt_preprocess_info_t* info);

/* The plan report (`vitrt inspect --plan`): what a session runs, where each tensor lives, how much memory. */
typedef struct vitrt_plan_info {
  size_t struct_size;
  const char* backend; /* the backend that runs it ("cpu", "ref", "cuda") */
  int32_t max_batch;
  int32_t num_steps;  /* ops run, after the planner passes (vitrt_session_get_step) */
  int32_t num_passes; /* planner passes (vitrt_session_get_pass) */
  int32_t reserved;
  uint64_t weight_bytes; /* mapped from the file, zero-copy */
  uint64_t activation_bytes;
  uint64_t activation_lower_bound; /* the peak of live bytes, which no placement can beat */
  uint64_t workspace_bytes;
  uint64_t persistent_bytes; /* constants folded at plan time */
  int64_t profiled_runs;     /* runs timed since creation or vitrt_session_reset_profile (profile on) */
  /* API version 4: what the session computes in: "fp32", or "bf16: " and which ops; "fp32: " and why when
   * bf16 was asked for but cannot run here. */
  const char* precision;
  int32_t num_tiles; /* API version 6: step ranges run in tiles (vitrt_session_get_tile) */
} vitrt_plan_info_t;
VITRT_API vitrt_status_t vitrt_session_get_plan(const vitrt_session_t* session, vitrt_plan_info_t* info);

/* API version 6: steps first..last run in tiles (docs/architecture.md §6.1, §6.2): the batch tile ("batch",
 * image by image at batch > 1) first if there is one, then the batch trunk ("trunk", at batch > 1 each thread
 * runs its own images through these steps, the batch tile's image by image) if there is one, then the row
 * tiles ("rows", block of rows by block of rows at every batch) in step order. */
typedef struct vitrt_tile_info {
  size_t struct_size;
  const char* kind; /* "batch", "trunk" or "rows" */
  int32_t first_step, last_step;
  int64_t block;   /* images (1; a trunk: the most images one thread runs) or rows per block */
  int32_t threads; /* blocks run at once: 1, or the session's threads (each its own block, kernels at 1) */
} vitrt_tile_info_t;
VITRT_API vitrt_status_t vitrt_session_get_tile(const vitrt_session_t* session, int32_t index,
                                                vitrt_tile_info_t* info);

typedef struct vitrt_pass_info {
  size_t struct_size;
  const char* name;
  int32_t ran;      /* 0 when disabled */
  int32_t modified; /* the pass changed the graph */
  int32_t ops_after;
} vitrt_pass_info_t;
VITRT_API vitrt_status_t vitrt_session_get_pass(const vitrt_session_t* session, int32_t index,
                                                vitrt_pass_info_t* info);

typedef struct vitrt_step_info {
  size_t struct_size;
  const char* op;      /* op type name */
  const char* name;    /* the op's name */
  int32_t num_outputs; /* vitrt_session_get_step_output(step, 0 .. num_outputs-1) */
  double seconds;      /* with options.profile: wall time in this step over plan.profiled_runs runs */
} vitrt_step_info_t;
VITRT_API vitrt_status_t vitrt_session_get_step(const vitrt_session_t* session, int32_t step,
                                                vitrt_step_info_t* info);

typedef struct vitrt_tensor_info {
  size_t struct_size;
  const char* name;
  int32_t index; /* the tensor's index in the planned graph */
  int32_t rank;
  int64_t dims[VITRT_MAX_RANK]; /* at the batch of the last run (max_batch before the first) */
  const char* arena;            /* "activations", "weights", "input", "persistent", or "-" */
  uint64_t offset;              /* within its arena */
  uint64_t bytes;               /* at max_batch */
  int32_t first_step;           /* the steps between which it is live */
  int32_t last_step;
  int32_t inplace_of;          /* the tensor whose memory an in-place kernel reuses for it, or -1 */
  const char* inplace_of_name; /* that tensor's name, or NULL */
  /* With options.preserve_intermediates, after a run: its float32 values at that run's batch; else NULL. */
  const float* data;
} vitrt_tensor_info_t;
VITRT_API vitrt_status_t vitrt_session_get_step_output(const vitrt_session_t* session, int32_t step,
                                                       int32_t output, vitrt_tensor_info_t* info);

/* Zeroes the step times and the run count that options.profile accumulates. */
VITRT_API vitrt_status_t vitrt_session_reset_profile(vitrt_session_t* session);

/* A float32 array read from a NumPy .npy file (float32 or float64 data, C order, at most
 * vitrt_input_limits_t.max_npy_file_bytes, exactly the bytes its header declares). */
typedef struct vitrt_array vitrt_array_t;
/* On success *out owns the array; free it with vitrt_array_free(). On failure *out is set to NULL. */
VITRT_API vitrt_status_t vitrt_npy_read(const char* path, vitrt_array_t** out);
VITRT_API void vitrt_array_free(vitrt_array_t* array); /* accepts NULL */
VITRT_API int32_t vitrt_array_rank(const vitrt_array_t* array);
VITRT_API const int64_t* vitrt_array_dims(const vitrt_array_t* array); /* rank values, owned by the array */
VITRT_API size_t vitrt_array_size(const vitrt_array_t* array);         /* elements */
VITRT_API const float* vitrt_array_data(const vitrt_array_t* array);
/* Writes float32 data of shape dims[0..rank) as a .npy file (0 <= rank <= 32, dims >= 0). */
VITRT_API vitrt_status_t vitrt_npy_write(const char* path, const float* data, const int64_t* dims,
                                         int32_t rank);

#ifdef __cplusplus
}
#endif

#endif /* VITRT_H_ */
