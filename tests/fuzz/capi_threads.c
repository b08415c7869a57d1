/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright the vitrt authors. */
/* The C API from several threads at once, as vitrt.h allows: one model shared by every thread, one session
 * per thread (ref and cpu backends, 1 or 2 threads each), plus threads that load, fail and free models of
 * their own so that thread-local error messages are exercised. Every run must give the single-threaded
 * reference's logits (bit for bit on the ref backend). Built into the normal suite (ctest capi_threads) and
 * run under ThreadSanitizer by tools/test.sh --tsan. vitrt_capi_threads MODEL [THREADS] [RUNS] */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitrt.h"

enum { kBatch = 2 };

static const char* g_path;
static vitrt_model_t* g_model;
static int32_t g_classes, g_in;
static float* g_input;
static float* g_expected;
static int g_runs = 50;

typedef struct {
  int index;
  int failures;
  char what[256];
} worker_t;

static void fail(worker_t* w, const char* what) {
  if (!w->failures) snprintf(w->what, sizeof w->what, "thread %d: %s", w->index, what);
  ++w->failures;
}

static void* run_sessions(worker_t* w) {
  vitrt_session_options_t o = vitrt_session_default_options();
  const int ref = w->index % 2 == 0;
  o.backend = ref ? VITRT_BACKEND_REF : VITRT_BACKEND_CPU;
  o.num_threads = 1 + (w->index / 2) % 2;
  o.max_batch = kBatch;
  vitrt_session_t* s = NULL;
  if (vitrt_session_create(g_model, &o, &s) != VITRT_OK) {
    fail(w, vitrt_last_error_message());
    return NULL;
  }
  float* out = malloc(sizeof(float) * kBatch * g_classes);
  for (int r = 0; r < g_runs && !w->failures; ++r) {
    if (vitrt_session_run(s, g_input, kBatch, out, (size_t)kBatch * g_classes) != VITRT_OK) {
      fail(w, vitrt_last_error_message());
      break;
    }
    for (int i = 0; i < kBatch * g_classes; ++i) {
      const float d = fabsf(out[i] - g_expected[i]);
      if (ref ? out[i] != g_expected[i] : !(d <= 1e-4f * (1.0f + fabsf(g_expected[i])))) {
        fail(w, "logits differ from the single-threaded run");
        break;
      }
    }
  }
  free(out);
  vitrt_session_free(s);
  return NULL;
}

/* Loads and frees its own handles and provokes errors: each thread must see its own message. */
static void* run_errors(worker_t* w) {
  char missing[64];
  snprintf(missing, sizeof missing, "/nonexistent/thread-%d.vitrt", w->index);
  for (int r = 0; r < g_runs && !w->failures; ++r) {
    vitrt_model_t* m = NULL;
    if (vitrt_model_load(missing, &m) != VITRT_ERR_IO || m != NULL)
      fail(w, "loading a missing file did not fail");
    if (!strstr(vitrt_last_error_message(), missing)) fail(w, "the error message is another thread's");
    if (vitrt_model_load(g_path, &m) != VITRT_OK) {
      fail(w, vitrt_last_error_message());
      break;
    }
    if (vitrt_model_num_classes(m) != g_classes || !vitrt_model_label(m, 0)) fail(w, "model queries differ");
    vitrt_session_t* s = NULL;
    vitrt_session_options_t o = vitrt_session_default_options();
    o.backend = VITRT_BACKEND_REF;
    if (vitrt_session_create(m, &o, &s) != VITRT_OK) fail(w, vitrt_last_error_message());
    vitrt_model_free(m); /* the session keeps it alive */
    float out[1];
    if (s && vitrt_session_run(s, g_input, 1, out, 0) != VITRT_ERR_INVALID_ARGUMENT)
      fail(w, "a too small output buffer was accepted");
    vitrt_session_free(s);
  }
  return NULL;
}

static void* worker(void* arg) {
  worker_t* w = arg;
  return w->index % 3 == 2 ? run_errors(w) : run_sessions(w);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [THREADS] [RUNS]\n", argv[0]);
    return 2;
  }
  g_path = argv[1];
  const int threads = argc > 2 ? atoi(argv[2]) : 6;
  if (argc > 3) g_runs = atoi(argv[3]);
  if (vitrt_model_load(g_path, &g_model) != VITRT_OK) {
    fprintf(stderr, "cannot load %s: %s\n", g_path, vitrt_last_error_message());
    return 1;
  }
  int32_t c = 0, h = 0, wd = 0;
  vitrt_model_input_shape(g_model, &c, &h, &wd);
  g_classes = vitrt_model_num_classes(g_model);
  g_in = c * h * wd;
  g_input = malloc(sizeof(float) * kBatch * g_in);
  g_expected = malloc(sizeof(float) * kBatch * g_classes);
  for (int i = 0; i < kBatch * g_in; ++i) g_input[i] = (float)((i * 37) % 19 - 9) / 9.0f;
  vitrt_session_options_t o = vitrt_session_default_options();
  o.backend = VITRT_BACKEND_REF;
  o.max_batch = kBatch;
  vitrt_session_t* s = NULL;
  if (vitrt_session_create(g_model, &o, &s) != VITRT_OK ||
      vitrt_session_run(s, g_input, kBatch, g_expected, (size_t)kBatch * g_classes) != VITRT_OK) {
    fprintf(stderr, "reference run: %s\n", vitrt_last_error_message());
    return 1;
  }
  vitrt_session_free(s);

  pthread_t* tid = calloc(threads, sizeof *tid);
  worker_t* ws = calloc(threads, sizeof *ws);
  for (int i = 0; i < threads; ++i) {
    ws[i].index = i;
    if (pthread_create(&tid[i], NULL, worker, &ws[i]) != 0) return 1;
  }
  int failures = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(tid[i], NULL);
    if (ws[i].failures) fprintf(stderr, "%s (%d failures)\n", ws[i].what, ws[i].failures);
    failures += ws[i].failures;
  }
  vitrt_model_free(g_model);
  free(tid);
  free(ws);
  free(g_input);
  free(g_expected);
  if (failures) return 1;
  printf("C API from %d threads x %d runs: all results equal the single-threaded run\n", threads, g_runs);
  return 0;
}
