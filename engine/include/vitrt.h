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

/* Version of this header's API; bumped on any change to it (see the README's changelog). */
#define VITRT_API_VERSION 2

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

#ifdef __cplusplus
}
#endif

#endif /* VITRT_H_ */
