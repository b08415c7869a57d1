// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt.Session: a model planned for one backend; run() takes float32 NCHW numpy arrays of any batch.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <sched.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <mutex>

#include "bindings.h"
#include "images.h"
#include "text.h"
#include "top_k.h"

namespace vitrt::python {
namespace {

namespace api = vitrt::api;

// threads=0: the cores this process may run on.
int32_t available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

std::string shape_text(const py::array& a) {
  std::string s = "[";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + "]";
}

// The index of the first NaN or infinity in src[0, n), or n. Blocks are screened with a loop the compiler
// vectorises; only a block holding one is searched element by element.
size_t first_non_finite(const float* src, size_t n) {
  constexpr size_t kBlock = 4096;
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t e = std::min(n, b + kBlock);
    int bad = 0;
    for (size_t i = b; i < e; ++i) bad |= !(std::fabs(src[i]) <= FLT_MAX);
    if (bad)
      for (size_t i = b; i < e; ++i)
        if (!(std::fabs(src[i]) <= FLT_MAX)) return i;
  }
  return n;
}

class Session {
 public:
  Session(ModelPtr model, const std::string& backend, int threads, const std::string& precision,
          int max_batch)
      : model_(std::move(model)) {
    if (!model_) fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt.Session: model is None, expected a vitrt.Model");
    if (threads < 0)
      fail(VITRT_ERR_INVALID_ARGUMENT,
           "vitrt.Session: threads must be >= 0 (0: every core), got " + std::to_string(threads));
    if (max_batch < 1)
      fail(VITRT_ERR_INVALID_ARGUMENT,
           "vitrt.Session: max_batch must be >= 1, got " + std::to_string(max_batch));
    options_.backend = api::backend_from_name(backend);
    options_.precision = api::precision_from_name(precision);
    threads_ = threads == 0 ? available_cores() : threads;
    options_.num_threads = threads_;
    options_.max_batch = 1;  // planned at batch 1 now (checks the options), re-planned for larger batches
    max_batch_ = max_batch;
    shape_ = model_->model.input_shape();
    output_dims_ = model_->model.info().output_dims;
    py::gil_scoped_release unlocked;
    session_ = std::make_unique<api::Session>(model_->model, options_);
  }

  py::array run(const py::object& x) {
    const api::InputShape& s = shape_;
    const std::string expected = "float32 [N, " + std::to_string(s.channels) + ", " +
                                 std::to_string(s.height) + ", " + std::to_string(s.width) +
                                 "] (NCHW, preprocessed)";
    if (!py::isinstance<py::array>(x))
      fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: expected a numpy.ndarray " + expected + ", got " +
                                    py::str(py::type::of(x).attr("__name__")).cast<std::string>());
    const auto a = py::reinterpret_borrow<py::array>(x);
    const py::dtype dt = a.dtype();
    if (dt.attr("char").cast<std::string>() != "f" || !dt.attr("isnative").cast<bool>())
      fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: the input's dtype is " +
                                    py::str(py::handle(dt)).cast<std::string>() + ", expected " + expected +
                                    " (x.astype(numpy.float32))");
    if (a.ndim() != 4 || a.shape(1) != s.channels || a.shape(2) != s.height || a.shape(3) != s.width)
      fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: the input's shape is " + shape_text(a) + ", expected " +
                                    expected + " for '" + model_->path + "'");
    const py::ssize_t n = a.shape(0);
    if (n == 0) fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: the input is an empty batch " + shape_text(a));
    if (!(a.flags() & py::array::c_style) || reinterpret_cast<uintptr_t>(a.data()) % alignof(float) != 0)
      fail(VITRT_ERR_BAD_INPUT,
           "vitrt.Session.run: the input is not C-contiguous and aligned (a transposed or strided view?); "
           "pass numpy.ascontiguousarray(x)");
    if (n > INT32_MAX)
      fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: batch " + std::to_string(n) + " is too large");

    // Output dims as the model declares them, the batch (-1) set to n.
    std::vector<py::ssize_t> out_dims;
    size_t per_out = 1;
    for (size_t d = 0; d < output_dims_.size(); ++d) {
      out_dims.push_back(output_dims_[d] < 0 ? n : output_dims_[d]);
      if (d > 0) per_out *= static_cast<size_t>(out_dims.back());
    }
    py::array_t<float> y(out_dims);
    const float* src = static_cast<const float*>(a.data());
    float* dst = y.mutable_data();
    const size_t per_in = s.elements();
    {
      // `a` and `y` stay referenced by this frame while the GIL is released.
      py::gil_scoped_release unlocked;
      const size_t bad = first_non_finite(src, static_cast<size_t>(n) * per_in);
      if (bad < static_cast<size_t>(n) * per_in)
        fail(VITRT_ERR_BAD_INPUT, "vitrt.Session.run: the input holds " +
                                      std::string(std::isnan(src[bad]) ? "NaN" : "an infinity") +
                                      " at image " + std::to_string(bad / per_in) + ", element " +
                                      std::to_string(bad % per_in));
      run_unlocked(src, n, dst, per_out, "vitrt.Session.run");
    }
    return std::move(y);
  }

  // Top-k classes of each image (paths or encoded bytes), preprocessed as `vitrt classify` does.
  py::list classify(const py::object& images, int top_k, const std::string& errors) {
    if (top_k < 1)
      fail(VITRT_ERR_INVALID_ARGUMENT,
           "vitrt.Session.classify: top_k must be >= 1, got " + std::to_string(top_k));
    if (errors != "raise" && errors != "report")
      fail(VITRT_ERR_INVALID_ARGUMENT,
           "vitrt.Session.classify: errors must be 'raise' or 'report', got '" + errors + "'");
    const bool one = py::isinstance<py::str>(images) || py::isinstance<py::bytes>(images) ||
                     py::isinstance<py::bytearray>(images) || py::hasattr(images, "__fspath__");
    std::vector<ImageSource> sources;
    if (one) {
      sources.push_back(image_source(images, 0));
    } else {
      for (const py::handle& image : py::iter(images)) sources.push_back(image_source(image, sources.size()));
    }
    const int32_t classes = model_->model.num_classes();
    std::vector<py::str> labels;
    for (const std::string& l : model_->model.labels()) labels.push_back(text(l));
    const size_t per_in = shape_.elements();
    const size_t chunk = std::min<size_t>(std::max<size_t>(sources.size(), 1), max_batch_);
    std::vector<float> input(chunk * per_in), logits(chunk * static_cast<size_t>(classes));
    std::vector<std::string> failures(sources.size());
    std::vector<std::vector<vitrt::cli::ClassScore>> tops(sources.size());
    {
      py::gil_scoped_release unlocked;
      for (size_t start = 0; start < sources.size(); start += chunk) {
        std::vector<size_t> ok;  // images of this chunk that decoded, in order
        for (size_t i = start; i < std::min(sources.size(), start + chunk); ++i) {
          try {
            preprocess(model_->model, sources[i], input.data() + ok.size() * per_in, per_in);
            ok.push_back(i);
          } catch (const api::Error& e) {
            if (errors == "raise") throw;
            failures[i] = e.what();
          }
        }
        if (ok.empty()) continue;
        run_unlocked(input.data(), static_cast<int64_t>(ok.size()), logits.data(), classes,
                     "vitrt.Session.classify");
        for (size_t j = 0; j < ok.size(); ++j)
          tops[ok[j]] = vitrt::cli::softmax_top_k(logits.data() + j * classes, classes, top_k);
      }
    }
    py::list rows;
    for (size_t i = 0; i < sources.size(); ++i) {
      py::dict row;
      // A path as os.fsdecode gives it (the str the caller passed), so rows match their keys.
      row["image"] = sources[i].in_memory ? text(sources[i].name) : fs_text(sources[i].name);
      py::list index, label, probability, logit;
      for (const vitrt::cli::ClassScore& c : tops[i]) {
        index.append(c.index);
        label.append(c.index < static_cast<int>(labels.size()) ? labels[c.index]
                                                               : text("class_" + std::to_string(c.index)));
        probability.append(c.probability);
        logit.append(c.logit);
      }
      row["indices"] = index;
      row["labels"] = label;
      row["probabilities"] = probability;
      row["logits"] = logit;
      row["error"] = failures[i].empty() ? py::object(py::none()) : py::object(text(failures[i]));
      rows.append(row);
    }
    return rows;
  }

  void close() {
    py::gil_scoped_release unlocked;
    std::lock_guard<std::mutex> lock(mutex_);
    session_.reset();
  }
  bool closed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !session_;
  }
  // The plan's report; for a closed session, an error.
  api::PlanInfo plan_info() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!session_) fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt.Session: the session is closed");
    return session_->plan();
  }
  // threads_, not options_.num_threads: plan() assigns options_ under the mutex while another thread may ask.
  int32_t threads() const { return threads_; }
  int32_t max_batch() const { return max_batch_; }
  const ModelPtr& model() const { return model_; }

 private:
  // Re-plans for a larger batch (the new plan replaces the old one only once it exists).
  void plan(int32_t batch) {
    api::SessionOptions o = options_;
    o.max_batch = batch;
    auto planned = std::make_unique<api::Session>(model_->model, o);
    session_ = std::move(planned);
    options_ = o;
  }

  // Runs n images of src into dst (per_out floats each) in chunks of at most max_batch_, re-planning for a
  // larger chunk than planned. Called without the GIL.
  void run_unlocked(const float* src, int64_t n, float* dst, size_t per_out, const char* what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!session_) fail(VITRT_ERR_INVALID_ARGUMENT, std::string(what) + ": the session is closed");
    const size_t per_in = shape_.elements();
    const int32_t chunk = static_cast<int32_t>(std::min<int64_t>(n, max_batch_));
    if (chunk > options_.max_batch) plan(chunk);
    for (int64_t i = 0; i < n; i += chunk) {
      const int32_t b = static_cast<int32_t>(std::min<int64_t>(chunk, n - i));
      session_->run(src + i * per_in, b, dst + i * per_out, b * per_out);
    }
  }

  ModelPtr model_;
  api::SessionOptions options_;
  int32_t threads_ = 1;  // set once by the constructor
  int32_t max_batch_ = 1;
  api::InputShape shape_;
  std::vector<int64_t> output_dims_;
  std::mutex mutex_;                       // one run at a time: a C session is used by one thread at a time
  std::unique_ptr<api::Session> session_;  // null once closed
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Session>(m, "Session", R"doc(
A Model planned for one backend: Session(model, backend="auto", threads=0, precision="fp32", max_batch=64).

backend: "auto", "cpu", "ref" or "cuda". threads: worker threads, 0 for every core this process may use.
precision: "fp32" or "bf16" (bf16 where the CPU has AVX512-BF16, else fp32; see .precision).
max_batch: the largest batch run at once; the session is planned for the largest batch it has seen up to that,
and larger inputs run in chunks of max_batch.

A session runs one call at a time (concurrent calls from several threads wait for each other); for parallel
runs give each thread its own Session of a shared Model. close() (or a `with` block) frees its memory.
)doc")
      .def(py::init([](const py::object& model, const std::string& backend, int threads,
                       const std::string& precision, int max_batch) {
             // Taken as an object: pybind11 would turn None into an empty ModelPtr, or raise a TypeError.
             if (!py::isinstance<ModelHandle>(model))
               fail(VITRT_ERR_INVALID_ARGUMENT,
                    "vitrt.Session: model must be a vitrt.Model, got " + type_name(model));
             return std::make_unique<Session>(model.cast<ModelPtr>(), backend, threads, precision, max_batch);
           }),
           py::arg("model"), py::arg("backend") = "auto", py::arg("threads") = 0,
           py::arg("precision") = "fp32", py::arg("max_batch") = 64)
      .def("run", &Session::run, py::arg("x"), R"doc(
Logits for a preprocessed float32 NCHW batch: x of shape [N, C, H, W] (N >= 1, C-contiguous, finite; not
copied) -> a new float32 array [N, classes]. The GIL is released while it runs.
)doc")
      .def("classify", &Session::classify, py::arg("images"), py::arg("top_k") = 5,
           py::arg("errors") = "raise",
           R"doc(
The top_k classes of each image, as `vitrt classify` reports them: images is a path (str, os.PathLike), the
encoded bytes of a PNG/JPEG, or a sequence of them, each decoded and preprocessed by the engine exactly as the
CLI does. Returns one dict per image, in order: image (the path, or "<bytes #i>"), indices, labels,
probabilities (softmax over all classes), logits, error. errors="raise": an unreadable image raises
(vitrt.BadInputError, vitrt.FileError naming it); errors="report": its row has the message in "error" and
empty lists, and the other images are still classified.
)doc")
      .def("close", &Session::close,
           "Frees the plan and its memory; run() afterwards raises vitrt.InvalidArgumentError.")
      .def_property_readonly("closed", &Session::closed)
      .def_property_readonly("model", &Session::model, "The Model this session runs.")
      .def_property_readonly("threads", &Session::threads, "Worker threads.")
      .def_property_readonly("max_batch", &Session::max_batch, "The largest batch run at once.")
      .def_property_readonly(
          "backend", [](Session& s) { return s.plan_info().backend; },
          "The backend that runs it ('cpu', 'ref'...).")
      .def_property_readonly(
          "precision", [](Session& s) { return s.plan_info().precision; },
          "What it computes in: 'fp32', 'bf16: <which ops>' or 'fp32: <why not bf16>'.")
      .def(
          "__enter__", [](Session& s) -> Session& { return s; }, py::return_value_policy::reference)
      .def("__exit__", [](Session& s, const py::args&) { s.close(); });
}

}  // namespace vitrt::python
