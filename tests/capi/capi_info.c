/* SPDX-License-Identifier: Apache-2.0
 * Copyright the vitrt authors.
 *
 * The calls of API versions 3 and 4 from C, as the vitrt CLI uses them: model info, preprocessing, the plan
 * report, profiling, image preprocessing into a caller buffer, .npy arrays, input limits, exit codes; and
 * each one's bad input (null pointers, wrong struct sizes, out-of-range indices, small buffers, unreadable
 * files), which must come back as a status and a message naming what is wrong.
 *
 * Usage: capi_info MODEL.vitrt INPUT.npy IMAGE.png WORK_DIR
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "capi_check.h"
#include "vitrt.h"

/* The call failed with `status` and its message contains `needle`. */
#define EXPECT_ERROR(call, status, needle)                                                                 \
  do {                                                                                                     \
    const vitrt_status_t st_ = (call);                                                                     \
    EXPECT(st_ == (status) && strstr(vitrt_last_error_message(), (needle)) != NULL,                        \
           "%s: status %d (want %d), message '%s' (want it to name '%s')", #call, (int)st_, (int)(status), \
           vitrt_last_error_message(), (needle));                                                          \
  } while (0)

static void test_exit_codes_and_limits(void) {
  EXPECT(vitrt_exit_code(VITRT_OK) == VITRT_EXIT_OK, "ok -> 0");
  EXPECT(vitrt_exit_code(VITRT_ERR_INVALID_ARGUMENT) == VITRT_EXIT_USAGE, "invalid argument -> usage");
  EXPECT(vitrt_exit_code(VITRT_ERR_BAD_MODEL) == VITRT_EXIT_BAD_MODEL, "bad model -> 2");
  EXPECT(vitrt_exit_code(VITRT_ERR_BAD_INPUT) == VITRT_EXIT_BAD_INPUT, "bad input -> 3");
  EXPECT(vitrt_exit_code(VITRT_ERR_IO) == VITRT_EXIT_BAD_INPUT, "io -> 3");
  EXPECT(vitrt_exit_code(VITRT_ERR_UNSUPPORTED) == VITRT_EXIT_RUNTIME, "unsupported -> 4");
  EXPECT(vitrt_exit_code(VITRT_ERR_OUT_OF_MEMORY) == VITRT_EXIT_RUNTIME, "out of memory -> 4");
  EXPECT(vitrt_exit_code(VITRT_ERR_RUNTIME) == VITRT_EXIT_RUNTIME, "runtime -> 4");

  vitrt_input_limits_t l;
  memset(&l, 0, sizeof l);
  l.struct_size = sizeof l;
  EXPECT(vitrt_get_input_limits(&l) == VITRT_OK && l.max_image_file_bytes > 0 && l.max_image_pixels > 0 &&
             l.max_png_side > 0 && l.max_jpeg_scans > 0 && l.max_npy_file_bytes > 0,
         "input limits");
  EXPECT_ERROR(vitrt_get_input_limits(NULL), VITRT_ERR_INVALID_ARGUMENT, "vitrt_get_input_limits");
  l.struct_size = 0;
  EXPECT_ERROR(vitrt_get_input_limits(&l), VITRT_ERR_INVALID_ARGUMENT, "struct_size");
  l.struct_size = sizeof l + 8;
  EXPECT_ERROR(vitrt_get_input_limits(&l), VITRT_ERR_INVALID_ARGUMENT, "struct_size");
  /* A caller built against an older, shorter struct: only its fields are written. */
  memset(&l, 0xAB, sizeof l);
  l.struct_size = offsetof(vitrt_input_limits_t, max_png_side);
  EXPECT(vitrt_get_input_limits(&l) == VITRT_OK &&
             l.struct_size == offsetof(vitrt_input_limits_t, max_png_side) && l.max_image_pixels > 0 &&
             l.max_png_side == 0xABABABABu,
         "a short struct_size is honoured");

  vitrt_backend_t b = VITRT_BACKEND_AUTO;
  EXPECT(vitrt_backend_from_name("ref", &b) == VITRT_OK && b == VITRT_BACKEND_REF, "backend ref");
  EXPECT(vitrt_backend_from_name("cuda", &b) == VITRT_OK && b == VITRT_BACKEND_CUDA, "backend cuda");
  EXPECT_ERROR(vitrt_backend_from_name("tpu", &b), VITRT_ERR_INVALID_ARGUMENT, "unknown backend 'tpu'");
  EXPECT_ERROR(vitrt_backend_from_name(NULL, &b), VITRT_ERR_INVALID_ARGUMENT, "vitrt_backend_from_name");
}

static void test_model_info(const vitrt_model_t* model, const char* path) {
  vitrt_model_info_t info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT(vitrt_model_get_info(model, &info) == VITRT_OK, "get_info: %s", vitrt_last_error_message());
  int32_t c = 0, h = 0, w = 0;
  vitrt_model_input_shape(model, &c, &h, &w);
  EXPECT(info.input_rank == 4 && info.input_dims[0] == -1 && info.input_dims[1] == c &&
             info.input_dims[2] == h && info.input_dims[3] == w,
         "input dims [B,C,H,W]");
  EXPECT(info.output_rank == 2 && info.output_dims[0] == -1 && info.output_dims[1] == info.num_classes,
         "output dims [B,classes]");
  EXPECT(info.num_classes == vitrt_model_num_classes(model) && info.num_classes > 0, "num_classes");
  EXPECT(info.format_version >= 1 && info.format_version <= vitrt_format_version(), "format version");
  EXPECT(info.producer && strlen(info.producer) > 0, "producer");
  EXPECT(info.arch && strcmp(info.arch, vitrt_model_arch(model)) == 0, "arch");
  EXPECT(info.input_dtype && strcmp(info.input_dtype, "float32") == 0, "input dtype");
  EXPECT(info.num_labels == info.num_classes && vitrt_model_label(model, info.num_labels - 1) != NULL &&
             vitrt_model_label(model, info.num_labels) == NULL,
         "labels");
  EXPECT(info.num_ops > 0 && info.num_tensors > info.num_weights && info.num_weights > 0 &&
             info.weight_bytes > 0,
         "counts: %d ops, %d tensors, %d weights", info.num_ops, info.num_tensors, info.num_weights);
  for (int32_t i = 0; i < info.num_ops; ++i) EXPECT(vitrt_model_op_type(model, i) != NULL, "op %d type", i);
  EXPECT(vitrt_model_op_type(model, info.num_ops) == NULL && vitrt_model_op_type(model, -1) == NULL &&
             vitrt_model_op_type(NULL, 0) == NULL,
         "op type out of range is NULL");

  EXPECT(info.num_metadata >= 1, "metadata count");
  for (int32_t i = 0; i < info.num_metadata; ++i) {
    const char *key = NULL, *value = NULL;
    EXPECT(vitrt_model_metadata_at(model, i, &key, &value) == VITRT_OK && key && value &&
               vitrt_model_metadata(model, key) != NULL &&
               strcmp(vitrt_model_metadata(model, key), value) == 0,
           "metadata %d", i);
  }
  const char *key = NULL, *value = NULL;
  EXPECT_ERROR(vitrt_model_metadata_at(model, info.num_metadata, &key, &value), VITRT_ERR_INVALID_ARGUMENT,
               path);
  EXPECT_ERROR(vitrt_model_metadata_at(model, 0, NULL, &value), VITRT_ERR_INVALID_ARGUMENT,
               "vitrt_model_metadata_at");

  EXPECT_ERROR(vitrt_model_get_info(NULL, &info), VITRT_ERR_INVALID_ARGUMENT, "null model");
  EXPECT_ERROR(vitrt_model_get_info(model, NULL), VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_get_info");
  info.struct_size = 3;
  EXPECT_ERROR(vitrt_model_get_info(model, &info), VITRT_ERR_INVALID_ARGUMENT, "struct_size");

  vitrt_preprocess_info_t pp;
  memset(&pp, 0, sizeof pp);
  pp.struct_size = sizeof pp;
  EXPECT(vitrt_model_get_preprocess(model, &pp) == VITRT_OK, "get_preprocess: %s",
         vitrt_last_error_message());
  EXPECT(pp.channels == c && pp.crop_height == h && pp.crop_width == w && pp.resize_shorter >= h, "crop");
  EXPECT(pp.interpolation &&
             (strcmp(pp.interpolation, "bicubic") == 0 || strcmp(pp.interpolation, "bilinear") == 0 ||
              strcmp(pp.interpolation, "nearest") == 0),
         "interpolation");
  EXPECT((pp.num_mean == 1 || pp.num_mean == c) && (pp.num_std == 1 || pp.num_std == c) && pp.mean &&
             pp.std && pp.std[0] > 0,
         "mean/std");
  EXPECT_ERROR(vitrt_model_get_preprocess(NULL, &pp), VITRT_ERR_INVALID_ARGUMENT, "null model");
  pp.struct_size = sizeof pp + 1;
  EXPECT_ERROR(vitrt_model_get_preprocess(model, &pp), VITRT_ERR_INVALID_ARGUMENT, "struct_size");
}

static vitrt_session_t* make_session(const vitrt_model_t* model, int preserve, int profile,
                                     const char* disabled_passes) {
  vitrt_session_options_t o = vitrt_session_default_options();
  o.backend = VITRT_BACKEND_REF;
  o.preserve_intermediates = preserve;
  o.profile = profile;
  o.disabled_passes = disabled_passes;
  vitrt_session_t* s = NULL;
  EXPECT(vitrt_session_create(model, &o, &s) == VITRT_OK, "session: %s", vitrt_last_error_message());
  return s;
}

static void test_plan_report(const vitrt_model_t* model, const float* input) {
  const int32_t classes = vitrt_model_num_classes(model);
  float* logits = malloc(sizeof(float) * classes);

  /* Every pass off: the plan runs the file's ops, and every tensor survives the run. */
  vitrt_session_t* s = make_session(model, 1, 1, "all");
  if (!s) return;
  vitrt_model_info_t mi;
  memset(&mi, 0, sizeof mi);
  mi.struct_size = sizeof mi;
  vitrt_model_get_info(model, &mi);
  vitrt_plan_info_t plan;
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  EXPECT(vitrt_session_get_plan(s, &plan) == VITRT_OK, "get_plan: %s", vitrt_last_error_message());
  EXPECT(plan.backend && strcmp(plan.backend, "ref") == 0 && plan.max_batch == 1, "plan backend/batch");
  EXPECT(plan.num_steps == mi.num_ops, "passes off: %d steps for %d ops", plan.num_steps, mi.num_ops);
  EXPECT(plan.activation_bytes >= plan.activation_lower_bound && plan.activation_lower_bound > 0 &&
             plan.weight_bytes > 0 && plan.profiled_runs == 0,
         "plan memory");
  EXPECT(plan.num_passes > 0, "passes listed");
  for (int32_t i = 0; i < plan.num_passes; ++i) {
    vitrt_pass_info_t p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    EXPECT(vitrt_session_get_pass(s, i, &p) == VITRT_OK && p.name && !p.ran && !p.modified, "pass %d off", i);
  }
  vitrt_pass_info_t p;
  p.struct_size = sizeof p;
  EXPECT_ERROR(vitrt_session_get_pass(s, plan.num_passes, &p), VITRT_ERR_INVALID_ARGUMENT, "pass");

  EXPECT(vitrt_session_run(s, input, 1, logits, classes) == VITRT_OK, "run: %s", vitrt_last_error_message());
  plan.struct_size = sizeof plan;
  vitrt_session_get_plan(s, &plan);
  EXPECT(plan.profiled_runs == 1, "one profiled run, got %lld", (long long)plan.profiled_runs);
  double total = 0;
  vitrt_tensor_info_t last;
  memset(&last, 0, sizeof last);
  for (int32_t i = 0; i < plan.num_steps; ++i) {
    vitrt_step_info_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    EXPECT(vitrt_session_get_step(s, i, &st) == VITRT_OK && st.op && st.name && st.num_outputs >= 1 &&
               st.seconds >= 0 && strcmp(st.op, vitrt_model_op_type(model, i)) == 0,
           "step %d", i);
    total += st.seconds;
    for (int32_t k = 0; k < st.num_outputs; ++k) {
      vitrt_tensor_info_t t;
      memset(&t, 0, sizeof t);
      t.struct_size = sizeof t;
      EXPECT(vitrt_session_get_step_output(s, i, k, &t) == VITRT_OK && t.name && t.data && t.rank >= 1 &&
                 t.dims[0] == 1 && t.arena && t.bytes > 0 && t.first_step == i && t.last_step >= i &&
                 t.inplace_of == -1 && t.inplace_of_name == NULL,
             "step %d output %d", i, k);
      last = t;
    }
  }
  EXPECT(total > 0, "profiled step times add up to %g s", total);
  /* The last step writes the logits: preserve_intermediates keeps them readable. */
  EXPECT(last.data && last.rank == 2 && last.dims[1] == classes &&
             memcmp(last.data, logits, sizeof(float) * classes) == 0,
         "last tensor is the logits");
  vitrt_step_info_t st;
  st.struct_size = sizeof st;
  EXPECT_ERROR(vitrt_session_get_step(s, plan.num_steps, &st), VITRT_ERR_INVALID_ARGUMENT, "step");
  EXPECT_ERROR(vitrt_session_get_step(s, -1, &st), VITRT_ERR_INVALID_ARGUMENT, "step -1");
  EXPECT_ERROR(vitrt_session_get_step(NULL, 0, &st), VITRT_ERR_INVALID_ARGUMENT, "null session");
  vitrt_tensor_info_t t;
  t.struct_size = sizeof t;
  EXPECT_ERROR(vitrt_session_get_step_output(s, 0, 99, &t), VITRT_ERR_INVALID_ARGUMENT, "output 99");
  t.struct_size = 0;
  EXPECT_ERROR(vitrt_session_get_step_output(s, 0, 0, &t), VITRT_ERR_INVALID_ARGUMENT, "struct_size");
  EXPECT_ERROR(vitrt_session_get_plan(s, NULL), VITRT_ERR_INVALID_ARGUMENT, "vitrt_session_get_plan");
  EXPECT(vitrt_session_reset_profile(s) == VITRT_OK, "reset_profile");
  plan.struct_size = sizeof plan;
  vitrt_session_get_plan(s, &plan);
  EXPECT(plan.profiled_runs == 0, "reset_profile zeroes the run count");
  EXPECT_ERROR(vitrt_session_reset_profile(NULL), VITRT_ERR_INVALID_ARGUMENT, "null session");
  vitrt_session_free(s);

  /* Default options: passes run (fewer or equal steps), tensors share the arena, so no data pointers. */
  s = make_session(model, 0, 0, NULL);
  if (!s) return;
  plan.struct_size = sizeof plan;
  vitrt_session_get_plan(s, &plan);
  EXPECT(plan.num_steps <= mi.num_ops, "passes do not add steps");
  EXPECT(vitrt_session_run(s, input, 1, logits, classes) == VITRT_OK, "run: %s", vitrt_last_error_message());
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  EXPECT(vitrt_session_get_step_output(s, 0, 0, &t) == VITRT_OK && t.data == NULL,
         "no data pointer without preserve_intermediates");
  vitrt_session_free(s);

  /* An unknown pass name is refused at creation, naming it. */
  vitrt_session_options_t o = vitrt_session_default_options();
  o.disabled_passes = "no_such_pass";
  s = NULL;
  const vitrt_status_t st2 = vitrt_session_create(model, &o, &s);
  EXPECT(st2 != VITRT_OK && s == NULL && strstr(vitrt_last_error_message(), "no_such_pass") != NULL,
         "unknown pass: status %d, '%s'", (int)st2, vitrt_last_error_message());
  /* A caller built against API version 2 (options end at max_memory_bytes) gets the defaults for the rest. */
  o = vitrt_session_default_options();
  o.struct_size = offsetof(vitrt_session_options_t, opt_level);
  o.disabled_passes = "no_such_pass"; /* beyond its struct_size: ignored */
  EXPECT(vitrt_session_create(model, &o, &s) == VITRT_OK && s != NULL, "version 2 options: %s",
         vitrt_last_error_message());
  vitrt_session_free(s);

  /* API version 4: the session precision. bf16 never fails: the plan report says what runs (bf16 on a CPU
   * with AVX512-BF16, else fp32 and why); fp32 reports plain "fp32"; another value is refused, naming it. */
  vitrt_precision_t prec = VITRT_PRECISION_FP32;
  EXPECT(vitrt_precision_from_name("bf16", &prec) == VITRT_OK && prec == VITRT_PRECISION_BF16,
         "bf16 by name");
  EXPECT_ERROR(vitrt_precision_from_name("fp16", &prec), VITRT_ERR_INVALID_ARGUMENT, "fp16");
  o = vitrt_session_default_options();
  EXPECT(o.precision == VITRT_PRECISION_FP32, "fp32 by default");
  EXPECT(vitrt_session_create(model, &o, &s) == VITRT_OK, "fp32 session: %s", vitrt_last_error_message());
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  EXPECT(
      vitrt_session_get_plan(s, &plan) == VITRT_OK && plan.precision && strcmp(plan.precision, "fp32") == 0,
      "fp32 report: %s", plan.precision ? plan.precision : "(null)");
  vitrt_session_free(s);
  o.precision = VITRT_PRECISION_BF16;
  EXPECT(vitrt_session_create(model, &o, &s) == VITRT_OK, "bf16 session: %s", vitrt_last_error_message());
  EXPECT(vitrt_session_get_plan(s, &plan) == VITRT_OK && plan.precision &&
             (strncmp(plan.precision, "bf16: ", 6) == 0 || strncmp(plan.precision, "fp32: ", 6) == 0),
         "bf16 report: %s", plan.precision ? plan.precision : "(null)");
  EXPECT(vitrt_session_run(s, input, 1, logits, classes) == VITRT_OK, "bf16 run: %s",
         vitrt_last_error_message());
  vitrt_session_free(s);
  /* A caller built against API version 3 passes a struct_size that ends after preserve_intermediates'
   * padding; whatever those padding bytes hold (here 0xAA), it gets an fp32 session. */
  {
    unsigned char raw[sizeof(vitrt_session_options_t)];
    vitrt_session_options_t d = vitrt_session_default_options();
    memcpy(raw, &d, sizeof raw);
    memset(raw + offsetof(vitrt_session_options_t, reserved_v4), 0xAA,
           sizeof raw - offsetof(vitrt_session_options_t, reserved_v4));
    vitrt_session_options_t v3;
    memcpy(&v3, raw, sizeof v3);
    v3.struct_size = offsetof(vitrt_session_options_t, reserved_v4) + sizeof(int32_t);
    EXPECT(v3.struct_size <= offsetof(vitrt_session_options_t, precision),
           "version 3 size excludes precision");
    s = NULL;
    EXPECT(vitrt_session_create(model, &v3, &s) == VITRT_OK && s != NULL, "version 3 options: %s",
           vitrt_last_error_message());
    EXPECT(
        vitrt_session_get_plan(s, &plan) == VITRT_OK && plan.precision && strcmp(plan.precision, "fp32") == 0,
        "version 3 caller runs fp32: %s", plan.precision ? plan.precision : "(null)");
    vitrt_session_free(s);
  }
  o.precision = (vitrt_precision_t)7;
  s = NULL;
  EXPECT_ERROR(vitrt_session_create(model, &o, &s), VITRT_ERR_INVALID_ARGUMENT, "precision");
  EXPECT(s == NULL, "a refused session is NULL");
  free(logits);
}

static void test_image(const vitrt_model_t* model, const char* image, const char* work) {
  int32_t c = 0, h = 0, w = 0;
  vitrt_model_input_shape(model, &c, &h, &w);
  const size_t n = (size_t)c * h * w;
  float* a = malloc(sizeof(float) * n);
  float* b = malloc(sizeof(float) * n);
  EXPECT(vitrt_image_preprocess(model, image, a, n) == VITRT_OK, "preprocess: %s",
         vitrt_last_error_message());
  EXPECT(vitrt_image_preprocess(model, image, b, n) == VITRT_OK && memcmp(a, b, sizeof(float) * n) == 0,
         "preprocessing is deterministic");
  int finite = 1;
  for (size_t i = 0; i < n; ++i) finite &= isfinite(a[i]) != 0;
  EXPECT(finite, "preprocessed values are finite");
  EXPECT_ERROR(vitrt_image_preprocess(model, image, a, n - 1), VITRT_ERR_INVALID_ARGUMENT, image);
  EXPECT_ERROR(vitrt_image_preprocess(model, "/nonexistent/cat.png", a, n), VITRT_ERR_IO,
               "/nonexistent/cat.png");
  char garbage[4096];
  snprintf(garbage, sizeof garbage, "%s/garbage.png", work);
  FILE* f = fopen(garbage, "wb");
  fputs("\x89PNG\r\n\x1a\n not really", f);
  fclose(f);
  EXPECT_ERROR(vitrt_image_preprocess(model, garbage, a, n), VITRT_ERR_BAD_INPUT, "garbage.png");
  EXPECT_ERROR(vitrt_image_preprocess(model, work, a, n), VITRT_ERR_BAD_INPUT, work); /* a directory */
  EXPECT_ERROR(vitrt_image_preprocess(NULL, image, a, n), VITRT_ERR_INVALID_ARGUMENT,
               "vitrt_image_preprocess");
  EXPECT_ERROR(vitrt_image_preprocess(model, image, NULL, n), VITRT_ERR_INVALID_ARGUMENT,
               "vitrt_image_preprocess");

  /* The same image from memory gives the same values; a truncated copy is a bad input naming it. */
  f = fopen(image, "rb");
  EXPECT(f != NULL, "open %s", image);
  static unsigned char bytes[1 << 20];
  const size_t size = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  EXPECT(size > 0 && size < sizeof bytes, "read %s", image);
  memset(b, 0, sizeof(float) * n);
  EXPECT(vitrt_image_preprocess_memory(model, bytes, size, "in memory", b, n) == VITRT_OK &&
             memcmp(a, b, sizeof(float) * n) == 0,
         "preprocessing from memory equals preprocessing the file: %s", vitrt_last_error_message());
  EXPECT_ERROR(vitrt_image_preprocess_memory(model, bytes, size / 2, "half.png", b, n), VITRT_ERR_BAD_INPUT,
               "half.png");
  EXPECT_ERROR(vitrt_image_preprocess_memory(model, bytes, 0, "empty.png", b, n), VITRT_ERR_BAD_INPUT,
               "empty.png");
  EXPECT_ERROR(vitrt_image_preprocess_memory(model, bytes, size, "small", b, n - 1),
               VITRT_ERR_INVALID_ARGUMENT, "small");
  EXPECT_ERROR(vitrt_image_preprocess_memory(model, NULL, 4, "x", b, n), VITRT_ERR_INVALID_ARGUMENT,
               "vitrt_image_preprocess_memory");
  /* A buffer above the image file limit is refused as a file that large is: mapped, never touched (the
     check comes before any read), so it costs no memory. */
  vitrt_input_limits_t limits;
  memset(&limits, 0, sizeof limits);
  limits.struct_size = sizeof limits;
  EXPECT(vitrt_get_input_limits(&limits) == VITRT_OK, "vitrt_get_input_limits");
  const size_t huge = (size_t)limits.max_image_file_bytes + 1;
  void* big = mmap(NULL, huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT(big != MAP_FAILED, "mmap %zu bytes", huge);
  if (big != MAP_FAILED) {
    EXPECT_ERROR(vitrt_image_preprocess_memory(model, big, huge, "huge.png", b, n), VITRT_ERR_BAD_INPUT,
                 "above the limit");
    munmap(big, huge);
  }
  free(a);
  free(b);
}

static void test_npy(const char* input_path, const char* work) {
  vitrt_array_t* in = NULL;
  EXPECT(vitrt_npy_read(input_path, &in) == VITRT_OK && in != NULL, "npy_read: %s",
         vitrt_last_error_message());
  if (!in) return;
  const int32_t rank = vitrt_array_rank(in);
  const int64_t* dims = vitrt_array_dims(in);
  size_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= (size_t)dims[i];
  EXPECT(rank == 4 && n == vitrt_array_size(in) && vitrt_array_data(in) != NULL, "array shape and size");

  char out[4096];
  snprintf(out, sizeof out, "%s/copy.npy", work);
  EXPECT(vitrt_npy_write(out, vitrt_array_data(in), dims, rank) == VITRT_OK, "npy_write: %s",
         vitrt_last_error_message());
  vitrt_array_t* back = NULL;
  EXPECT(vitrt_npy_read(out, &back) == VITRT_OK && vitrt_array_rank(back) == rank &&
             memcmp(vitrt_array_dims(back), dims, sizeof(int64_t) * rank) == 0 &&
             vitrt_array_size(back) == n &&
             memcmp(vitrt_array_data(back), vitrt_array_data(in), sizeof(float) * n) == 0,
         "write then read gives the same array");
  vitrt_array_free(back);

  vitrt_array_t* bad = (vitrt_array_t*)1;
  EXPECT_ERROR(vitrt_npy_read("/nonexistent/x.npy", &bad), VITRT_ERR_IO, "/nonexistent/x.npy");
  EXPECT(bad == NULL, "a failed read sets *out to NULL");
  char garbage[4096];
  snprintf(garbage, sizeof garbage, "%s/garbage.npy", work);
  FILE* f = fopen(garbage, "wb");
  fputs("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'", f);
  fclose(f);
  EXPECT_ERROR(vitrt_npy_read(garbage, &bad), VITRT_ERR_BAD_INPUT, "garbage.npy");
  EXPECT_ERROR(vitrt_npy_read(NULL, &bad), VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_read");
  EXPECT_ERROR(vitrt_npy_read(input_path, NULL), VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_read");
  EXPECT(vitrt_array_rank(NULL) == 0 && vitrt_array_dims(NULL) == NULL && vitrt_array_size(NULL) == 0 &&
             vitrt_array_data(NULL) == NULL,
         "array accessors accept NULL");
  vitrt_array_free(NULL);

  const int64_t neg[2] = {2, -1};
  EXPECT_ERROR(vitrt_npy_write(out, vitrt_array_data(in), neg, 2), VITRT_ERR_INVALID_ARGUMENT, "negative");
  EXPECT_ERROR(vitrt_npy_write(out, vitrt_array_data(in), dims, 33), VITRT_ERR_INVALID_ARGUMENT, "rank 33");
  EXPECT_ERROR(vitrt_npy_write(out, vitrt_array_data(in), dims, -1), VITRT_ERR_INVALID_ARGUMENT, "rank -1");
  EXPECT_ERROR(vitrt_npy_write(out, NULL, dims, rank), VITRT_ERR_INVALID_ARGUMENT, "null data");
  EXPECT_ERROR(vitrt_npy_write("/nonexistent/dir/y.npy", vitrt_array_data(in), dims, rank), VITRT_ERR_IO,
               "/nonexistent/dir/y.npy");
  vitrt_array_free(in);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL INPUT.npy IMAGE WORK_DIR\n", argv[0]);
    return 2;
  }
  EXPECT(VITRT_API_VERSION == 6, "API version");
  test_exit_codes_and_limits();
  vitrt_model_t* model = NULL;
  if (vitrt_model_load(argv[1], &model) != VITRT_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], vitrt_last_error_message());
    return 1;
  }
  test_model_info(model, argv[1]);
  vitrt_array_t* input = NULL;
  if (vitrt_npy_read(argv[2], &input) == VITRT_OK) test_plan_report(model, vitrt_array_data(input));
  EXPECT(input != NULL, "reading %s: %s", argv[2], vitrt_last_error_message());
  vitrt_array_free(input);
  test_image(model, argv[3], argv[4]);
  test_npy(argv[2], argv[4]);
  vitrt_model_free(model);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API version 3 and 4 calls: all checks passed\n");
  return 0;
}
