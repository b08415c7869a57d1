/* SPDX-License-Identifier: Apache-2.0
 * Copyright the vitrt authors.
 *
 * A C program using libvitrt.so exactly as a user would: load a model, check its metadata, run a batch from a
 * .npy file and compare with expected logits, then exercise every error path.
 * Usage: capi_example MODEL.vitrt INPUT.npy EXPECTED_LOGITS.npy CORRUPT.vitrt
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "vitrt.h"

/* Reads a little-endian float32 or float64 .npy (C order) into floats; returns the element count or -1. */
static long read_npy(const char* path, float** out) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char pre[10];
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
    fclose(f);
    return -1;
  }
  const size_t hlen = pre[8] | (pre[9] << 8);
  char* header = malloc(hlen + 1);
  if (fread(header, 1, hlen, f) != hlen) {
    fclose(f);
    free(header);
    return -1;
  }
  header[hlen] = 0;
  const int is_f8 = strstr(header, "<f8") != NULL;
  long count = 1;
  const char* p = strchr(strstr(header, "'shape'"), '(') + 1;
  while (*p && *p != ')') {
    char* end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    count *= v;
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  free(header);
  float* data = malloc(sizeof(float) * count);
  for (long i = 0; i < count; ++i) {
    if (is_f8) {
      double d;
      if (fread(&d, 8, 1, f) != 1) count = -1;
      data[i] = (float)d;
    } else if (fread(&data[i], 4, 1, f) != 1) {
      count = -1;
    }
    if (count < 0) break;
  }
  fclose(f);
  *out = data;
  return count;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL INPUT.npy EXPECTED.npy CORRUPT_MODEL\n", argv[0]);
    return 2;
  }
  printf("vitrt %s, format version %u, API %d\n", vitrt_version(), vitrt_format_version(), VITRT_API_VERSION);

  vitrt_model_t* model = NULL;
  vitrt_status_t st = vitrt_model_load(argv[1], &model);
  if (st != VITRT_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], vitrt_last_error_message());
    return 1;
  }
  int32_t c = 0, h = 0, w = 0;
  EXPECT(vitrt_model_input_shape(model, &c, &h, &w) == VITRT_OK && c == 3 && h > 0 && w > 0, "input shape");
  const int32_t classes = vitrt_model_num_classes(model);
  EXPECT(classes > 0, "num_classes");
  EXPECT(vitrt_model_label(model, 0) != NULL, "label 0");
  EXPECT(vitrt_model_label(model, classes) == NULL, "label out of range must be NULL");
  EXPECT(vitrt_model_arch(model) && strlen(vitrt_model_arch(model)) > 0, "arch");
  EXPECT(vitrt_model_metadata(model, "no.such.key") == NULL, "missing metadata key");

  float *input = NULL, *expected = NULL;
  const long n_in = read_npy(argv[2], &input);
  const long n_out = read_npy(argv[3], &expected);
  EXPECT(n_in > 0 && n_out > 0, "reading the .npy files");
  const int32_t batch = (int32_t)(n_out / classes);
  EXPECT(batch >= 1 && (long)batch * c * h * w == n_in, "input/expected sizes agree");

  vitrt_session_options_t opts = vitrt_session_default_options();
  opts.max_batch = batch;
  opts.backend = VITRT_BACKEND_REF;
  vitrt_session_t* session = NULL;
  st = vitrt_session_create(model, &opts, &session);
  EXPECT(st == VITRT_OK, "session_create: %s", vitrt_last_error_message());
  /* The session keeps the model alive: freeing the model handle now is allowed. */
  vitrt_model_free(model);
  model = NULL;

  float* logits = malloc(sizeof(float) * classes * batch);
  st = vitrt_session_run(session, input, batch, logits, (size_t)classes * batch);
  EXPECT(st == VITRT_OK, "run: %s", vitrt_last_error_message());
  double max_ref = 0, max_err = 0;
  for (long i = 0; i < n_out; ++i) {
    if (fabs(expected[i]) > max_ref) max_ref = fabs(expected[i]);
    if (fabs(expected[i] - logits[i]) > max_err) max_err = fabs(expected[i] - logits[i]);
  }
  printf("max |logit - expected| = %.3g (max |expected| %.3g)\n", max_err, max_ref);
  EXPECT(max_err <= 1e-4 * max_ref, "logits differ from PyTorch: %.3g", max_err);

  uint64_t act = 0, ws = 0, weights = 0;
  EXPECT(vitrt_session_memory(session, &act, &ws, &weights) == VITRT_OK && act > 0 && weights > 0, "memory");

  /* Error paths: each returns a status and a message, none crashes. */
  EXPECT(vitrt_session_run(session, input, batch + 1, logits, (size_t)classes * (batch + 1)) ==
             VITRT_ERR_BAD_INPUT,
         "batch above max_batch");
  EXPECT(strstr(vitrt_last_error_message(), "batch") != NULL, "message names the batch");
  EXPECT(vitrt_session_run(session, input, batch, logits, 1) == VITRT_ERR_INVALID_ARGUMENT,
         "small output buffer");
  EXPECT(vitrt_session_run(NULL, input, batch, logits, 1) == VITRT_ERR_INVALID_ARGUMENT, "null session");
  vitrt_model_t* bad = (vitrt_model_t*)1;
  EXPECT(vitrt_model_load("/nonexistent.vitrt", &bad) == VITRT_ERR_IO && bad == NULL, "missing file");
  EXPECT(strstr(vitrt_last_error_message(), "/nonexistent.vitrt") != NULL, "message names the file");
  EXPECT(vitrt_model_load(argv[4], &bad) == VITRT_ERR_BAD_MODEL && bad == NULL, "corrupt file");
  printf("corrupt model: %s\n", vitrt_last_error_message());
  EXPECT(vitrt_model_load(NULL, &bad) == VITRT_ERR_INVALID_ARGUMENT, "null path");
  vitrt_session_options_t wrong = vitrt_session_default_options();
  wrong.struct_size = 3;
  vitrt_session_t* s2 = NULL;
  EXPECT(vitrt_model_load(argv[1], &model) == VITRT_OK, "reload");
  EXPECT(vitrt_session_create(model, &wrong, &s2) == VITRT_ERR_INVALID_ARGUMENT && s2 == NULL, "struct_size");
  wrong = vitrt_session_default_options();
  wrong.backend = VITRT_BACKEND_CUDA;
  st = vitrt_session_create(model, &wrong, &s2);
  EXPECT(st != VITRT_OK || s2 != NULL, "cuda either works or reports");
  if (st != VITRT_OK) printf("cuda: %s\n", vitrt_last_error_message());
  vitrt_session_free(s2);
  vitrt_session_free(session);
  vitrt_model_free(model);
  vitrt_model_free(NULL);
  vitrt_session_free(NULL);
  free(logits);
  free(input);
  free(expected);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
