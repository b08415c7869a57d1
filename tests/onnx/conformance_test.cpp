// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The ONNX backend conformance cases Debian ships (libonnx-testdata: data/node, simple, pytorch-converted,
// pytorch-operator), run through the importer on `ref` and `cpu` and compared with the shipped outputs at
// ONNX's tolerances (|got - want| <= 1e-7 + 1e-3·|want|); the int64 indices of an ArgMax / ArgMin / TopK
// graph output against vitrt's float indices, exactly. vitrt models take one float32 input: the case's first
// input stays the graph input with its shape as written (no batch axis), every other input becomes a constant
// (as weights are in a deployed model). A case whose import or session says "unsupported" (an op, attribute
// or form the IR cannot express yet) is counted as unsupported; every other case must pass. Prints a table
// per op type (a case counts under each op type it contains) and the totals.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "loader/model_loader.h"
#include "onnx/importer.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_tensor.h"
#include "runtime/session.h"

namespace fs = std::filesystem;
using namespace vitrt;

namespace {

const char* kDataRoot = "/usr/share/libonnx-testdata/data";

enum class Outcome { kPassed, kUnsupported, kFailed };

struct CaseResult {
  Outcome outcome = Outcome::kFailed;
  std::string why;
  std::set<std::string> ops;
};

bool read_file(const fs::path& p, std::string* bytes) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *bytes = ss.str();
  return true;
}

bool read_tensor(const fs::path& p, onnx::TensorProto* t) {
  std::string bytes;
  return read_file(p, &bytes) && t->ParseFromString(bytes);
}

CaseResult unsupported_case(std::string why) {
  return {Outcome::kUnsupported, std::move(why), {}};
}
CaseResult failed_case(std::string why) {
  return {Outcome::kFailed, std::move(why), {}};
}

CaseResult classify(const Status& st, const std::string& step) {
  if (st.code() == StatusCode::kUnsupported) return unsupported_case(step + ": " + st.message());
  return failed_case(step + ": " + st.message());
}

// Runs one test_data_set of a case on `backend`; empty when it matches.
std::string run_on(const std::shared_ptr<const Model>& model, const std::string& backend,
                   const std::vector<float>& input, const std::vector<onnx::TensorProto>& want,
                   Status* create_status) {
  SessionOptions o;
  o.backend = backend;
  o.max_batch = 1;
  o.num_threads = 2;
  o.poison_activations = true;
  std::unique_ptr<Session> s;
  *create_status = Session::create(model, o, &s);
  if (!create_status->ok()) return "session: " + create_status->message();
  const Graph& g = s->graph();
  const size_t n0 = static_cast<size_t>(s->output_shape(1).numel());
  std::vector<float> out0(n0, NAN);
  Status st = s->run(input.data(), 1, out0.data(), out0.size());
  if (!st.ok()) return "run: " + st.message();
  for (size_t k = 0; k < want.size(); ++k) {
    convert::OnnxValue w;
    convert::ExternalDataContext ext;
    if (!convert::tensor_to_value(want[k], "expected output", &ext, &w).ok()) return "bad expected output";
    const int32_t t = g.outputs[k];
    const Shape& shape = s->tensor_shape(t);
    const size_t count = w.kind == convert::ConstKind::kInt ? w.i.size() : w.f.size();
    if (static_cast<int64_t>(count) != shape.numel())
      return "output " + std::to_string(k) + " has " + std::to_string(shape.numel()) +
             " elements, expected " + std::to_string(count);
    const float* got = k == 0 ? out0.data() : s->tensor_data(t);
    if (!got) return "output " + std::to_string(k) + " not kept";
    if (w.kind ==
        convert::ConstKind::kInt) {  // ArgMax / ArgMin / TopK indices (run_case allows no other): exact
      for (size_t e = 0; e < w.i.size(); ++e)
        if (!w.i[e].is_static() || static_cast<double>(got[e]) != static_cast<double>(w.i[e].c))
          return "output " + std::to_string(k) + " element " + std::to_string(e) + ": index " +
                 std::to_string(got[e]) + ", expected " + std::to_string(w.i[e].c);
      continue;
    }
    for (size_t e = 0; e < w.f.size(); ++e) {
      const double a = got[e], b = w.f[e];
      const bool both_nan = std::isnan(a) && std::isnan(b);
      const bool same_inf = std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0);
      if (!both_nan && !same_inf && !(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b)))
        return "output " + std::to_string(k) + " element " + std::to_string(e) + ": " + std::to_string(a) +
               ", expected " + std::to_string(b);
    }
  }
  return "";
}

// Rewrites a graph of opset 13-17 into opset 18's forms of the ops whose definition changed there and that
// the importer reads: a Reduce*'s axes attribute becomes a constant input (ReduceSum's already is), and a
// Split without sizes gets num_outputs. Everything else means the same at 18.
void to_opset18_forms(onnx::GraphProto* g) {
  for (auto& n : *g->mutable_node()) {
    if (n.op_type().rfind("Reduce", 0) == 0 && n.op_type() != "ReduceSum") {
      for (int a = 0; a < n.attribute_size(); ++a) {
        if (n.attribute(a).name() != "axes") continue;
        onnx::TensorProto* axes = g->add_initializer();
        axes->set_name(n.output(0) + "_axes18");
        axes->set_data_type(onnx::TensorProto::INT64);
        axes->add_dims(n.attribute(a).ints_size());
        for (int64_t v : n.attribute(a).ints()) axes->add_int64_data(v);
        n.mutable_attribute()->DeleteSubrange(a, 1);
        if (n.input_size() < 2) n.add_input(axes->name());
        break;
      }
    }
    if (n.op_type() == "Split" && (n.input_size() < 2 || n.input(1).empty())) {
      bool has_split = false;
      for (const auto& a : n.attribute()) has_split |= a.name() == "split";
      if (has_split) continue;
      auto* a = n.add_attribute();
      a->set_name("num_outputs");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(n.output_size());
    }
  }
}

// `t` (int64, int32 or double values) as a float32 tensor, for the cases of ops whose vitrt kernels compute
// in float32 on data ONNX's cases hold as integers or doubles (Trilu's, CumSum's): integers must be exact as
// float32 (|v| <= 2^24), doubles are rounded once; false otherwise.
bool as_float_tensor(const onnx::TensorProto& t, onnx::TensorProto* out) {
  convert::OnnxValue v;
  convert::ExternalDataContext ext;
  if (!convert::tensor_to_value(t, "tensor", &ext, &v).ok()) return false;
  out->Clear();
  out->set_name(t.name());
  out->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : t.dims()) out->add_dims(d);
  if (v.kind == convert::ConstKind::kFloat) {
    for (float f : v.f) out->add_float_data(f);
    return true;
  }
  for (const convert::SymDim& d : v.i) {
    if (!d.is_static() || d.c > (int64_t{1} << 24) || d.c < -(int64_t{1} << 24)) return false;
    out->add_float_data(static_cast<float>(d.c));
  }
  return true;
}

// `restamp_opset` > 0 rewrites the model's opset before it is parsed (for cases of ops whose definition has
// not changed between the case's opset and that one); at 18 the graph is written in opset 18's forms too.
// `as_float`: the case's first input and its expected outputs, when they are integers or doubles, are read as
// float32 (as_float_tensor) and the graph's input and outputs declared float.
CaseResult run_case(const fs::path& dir, int64_t restamp_opset = 0, bool as_float = false) {
  CaseResult r;
  std::string bytes;
  if (!read_file(dir / "model.onnx", &bytes)) return failed_case("cannot read model.onnx");
  if (restamp_opset > 0) {
    onnx::ModelProto original;
    if (!original.ParseFromString(bytes)) return failed_case("cannot parse model.onnx");
    for (auto& o : *original.mutable_opset_import())
      if (o.domain().empty()) o.set_version(restamp_opset);
    if (restamp_opset >= 18) to_opset18_forms(original.mutable_graph());
    bytes = original.SerializeAsString();
  }
  onnx::ModelProto model;
  Status st = convert::parse_onnx_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                        (dir / "model.onnx").string(), &model);
  std::set<std::string> ops;
  for (const auto& n : model.graph().node()) ops.insert(n.op_type());
  if (!st.ok()) {
    r = classify(st, "parse");
    r.ops = ops;
    return r;
  }
  auto finish = [&](CaseResult c) {
    c.ops = ops;
    return c;
  };
  // The graph's computed inputs (those that are not initializers), in order, as the data sets number them.
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> inputs;
  for (const auto& i : model.graph().input())
    if (!inits.count(i.name())) inputs.push_back(i.name());
  if (inputs.empty()) return finish(unsupported_case("no computed input"));
  // Graph outputs that an ArgMax or ArgMin node, or TopK's second output, computes (int64 indices in ONNX).
  std::set<std::string> index_outputs;
  for (const auto& n : model.graph().node())
    if (n.op_type() == "ArgMax" || n.op_type() == "ArgMin")
      for (const auto& o : n.output()) index_outputs.insert(o);
    else if (n.op_type() == "TopK" && n.output_size() > 1)
      index_outputs.insert(n.output(1));
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return finish(failed_case("no test_data_set"));
  for (const fs::path& set : sets) {
    std::vector<onnx::TensorProto> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!read_tensor(set / ("input_" + std::to_string(i) + ".pb"), &in[i]))
        return finish(failed_case("cannot read input " + std::to_string(i)));
    std::vector<onnx::TensorProto> want(static_cast<size_t>(model.graph().output_size()));
    for (size_t k = 0; k < want.size(); ++k) {
      if (!read_tensor(set / ("output_" + std::to_string(k) + ".pb"), &want[k]))
        return finish(failed_case("cannot read output " + std::to_string(k)));
      if (as_float && want[k].data_type() != onnx::TensorProto::FLOAT &&
          !as_float_tensor(onnx::TensorProto(want[k]), &want[k]))
        return finish(unsupported_case("output " + std::to_string(k) + " is not exact as float32"));
      // vitrt computes in float32: ArgMax / ArgMin / TopK write their int64 indices as float values
      // (docs/onnx.md), compared exactly; any other non-float output is unsupported.
      const bool indices = want[k].data_type() == onnx::TensorProto::INT64 &&
                           index_outputs.count(model.graph().output(static_cast<int>(k)).name());
      if (want[k].data_type() != onnx::TensorProto::FLOAT && !indices)
        return finish(unsupported_case("output of " + convert::onnx_type_name(want[k].data_type())));
    }
    if (as_float && in[0].data_type() != onnx::TensorProto::FLOAT &&
        !as_float_tensor(onnx::TensorProto(in[0]), &in[0]))
      return finish(unsupported_case("first input is not exact as float32"));
    if (in[0].data_type() != onnx::TensorProto::FLOAT)
      return finish(unsupported_case("first input is " + convert::onnx_type_name(in[0].data_type())));
    if (in[0].dims_size() < 1) return finish(unsupported_case("scalar input"));
    convert::OnnxImportOptions io;
    io.static_input = true;
    for (size_t i = 1; i < inputs.size(); ++i) io.constant_inputs[inputs[i]] = &in[i];
    // The case's own input shape (test models may declare symbolic dims).
    onnx::ModelProto m = model;
    for (auto& gi : *m.mutable_graph()->mutable_input())
      if (gi.name() == inputs[0]) {
        auto* shape = gi.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (int64_t d : in[0].dims()) shape->add_dim()->set_dim_value(d);
        if (as_float) gi.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      }
    if (as_float)
      for (auto& go : *m.mutable_graph()->mutable_output())
        go.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    Graph g;
    std::string log;
    st = convert::import_onnx(m, io, &g, &log);
    if (!st.ok()) return finish(classify(st, "import"));
    auto owned = std::make_shared<Model>();
    owned->graph = std::move(g);
    owned->path = dir.string();
    // Not from a file: the session sees every constant as its own (persistent) memory.
    static const uint8_t kNoFile = 0;
    owned->file = MappedFile::borrow(&kNoFile, 0);
    std::shared_ptr<const Model> shared = owned;
    convert::OnnxValue x;
    convert::ExternalDataContext ext;
    if (!convert::tensor_to_value(in[0], "input", &ext, &x).ok())
      return finish(failed_case("bad input data"));
    for (const char* backend : {"ref", "cpu"}) {
      Status create;
      const std::string why = run_on(shared, backend, x.f, want, &create);
      if (!create.ok()) return finish(classify(create, std::string(backend) + " session"));
      if (!why.empty()) return finish(failed_case(std::string(backend) + ": " + why));
    }
  }
  return finish(CaseResult{Outcome::kPassed, "", {}});
}

struct Row {
  int cases = 0, passed = 0, unsupported = 0, failed = 0;
};

}  // namespace

TEST_CASE("ONNX backend conformance cases (libonnx-testdata) on ref and cpu") {
  REQUIRE_MESSAGE(fs::is_directory(kDataRoot),
                  "Debian's libonnx-testdata is not installed (tools/setup.sh installs it)");
  std::map<std::string, Row> per_op;
  std::map<std::string, Row> per_suite;
  std::vector<std::string> failures;
  for (const char* suite : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
    const fs::path root = fs::path(kDataRoot) / suite;
    if (!fs::is_directory(root)) continue;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    for (const fs::path& c : cases) {
      const CaseResult r = run_case(c);
      Row& s = per_suite[suite];
      ++s.cases;
      auto count = [&r](Row& row) {
        ++row.cases;
        if (r.outcome == Outcome::kPassed)
          ++row.passed;
        else if (r.outcome == Outcome::kUnsupported)
          ++row.unsupported;
        else
          ++row.failed;
      };
      --s.cases;
      count(s);
      for (const std::string& op : r.ops) count(per_op[op]);
      if (r.outcome == Outcome::kFailed)
        failures.push_back(std::string(suite) + "/" + c.filename().string() + ": " + r.why);
      if (std::getenv("VITRT_ONNX_VERBOSE") && r.outcome != Outcome::kPassed)
        std::printf("%s/%s: %s\n", suite, c.filename().string().c_str(), r.why.c_str());
    }
  }
  std::printf(
      "\nONNX conformance (libonnx-testdata), per op type (a case counts under each op it contains):\n");
  std::printf("| op | cases | passed | unsupported | failed |\n|---|---|---|---|---|\n");
  for (const auto& [op, row] : per_op)
    if (row.passed || row.failed)
      std::printf("| %s | %d | %d | %d | %d |\n", op.c_str(), row.cases, row.passed, row.unsupported,
                  row.failed);
  int unsupported_only = 0;
  for (const auto& kv : per_op) unsupported_only += !kv.second.passed && !kv.second.failed;
  std::printf("(%d further op types appear only in unsupported cases)\n\n", unsupported_only);
  std::printf("| suite | cases | passed | unsupported | failed |\n|---|---|---|---|---|\n");
  Row total;
  for (const auto& [suite, row] : per_suite) {
    std::printf("| %s | %d | %d | %d | %d |\n", suite.c_str(), row.cases, row.passed, row.unsupported,
                row.failed);
    total.cases += row.cases;
    total.passed += row.passed;
    total.unsupported += row.unsupported;
    total.failed += row.failed;
  }
  std::printf("| total | %d | %d | %d | %d |\n", total.cases, total.passed, total.unsupported, total.failed);
  for (const std::string& f : failures) std::printf("FAILED %s\n", f.c_str());
  std::fflush(stdout);
  CHECK(total.passed > 0);
  CHECK_MESSAGE(failures.empty(), failures.size(), " supported conformance cases fail (listed above)");
}

// Debian's cases of these ops are written at opsets 1, 6 and 7 (the opset-7 ones also run as written); their
// ONNX definitions (Elu-6, Selu-6, HardSigmoid-6, Softplus-1, Softsign-1, Sin-7, Cos-7, Tan-7, Asin-7,
// Acos-7, Atan-7, GlobalMaxPool-1, GlobalAveragePool-1, InstanceNormalization-6; ReduceLogSum-1 up to
// negative axes at 11) are the current ones through opset 17, so the same files stamped opset 17 are the same
// test of the mapping and kernels.
TEST_CASE("ONNX conformance cases of ops unchanged since opset 6, stamped opset 17") {
  REQUIRE(fs::is_directory(kDataRoot));
  int passed = 0, total = 0;
  for (const char* name : {"test_elu",
                           "test_elu_default",
                           "test_elu_example",
                           "test_hardsigmoid",
                           "test_hardsigmoid_default",
                           "test_hardsigmoid_example",
                           "test_softplus",
                           "test_softplus_example",
                           "test_globalmaxpool",
                           "test_globalmaxpool_precomputed",
                           "test_globalaveragepool",
                           "test_globalaveragepool_precomputed",
                           "test_instancenorm_epsilon",
                           "test_instancenorm_example",
                           "test_reduce_log_sum",
                           "test_sin",
                           "test_sin_example",
                           "test_cos",
                           "test_cos_example",
                           "test_selu",
                           "test_selu_default",
                           "test_selu_example",
                           "test_softsign",
                           "test_softsign_example",
                           "test_tan",
                           "test_tan_example",
                           "test_asin",
                           "test_asin_example",
                           "test_acos",
                           "test_acos_example",
                           "test_atan",
                           "test_atan_example"}) {
    ++total;
    CAPTURE(name);
    const CaseResult r = run_case(fs::path(kDataRoot) / "node" / name, 17);
    CHECK_MESSAGE(r.outcome == Outcome::kPassed, r.why);
    passed += r.outcome == Outcome::kPassed;
  }
  MESSAGE(passed, " of ", total, " re-stamped cases pass");
}

// Every node case written at opsets 13-17 that passes there, stamped opset 18 and opset 25 in its 18 form
// (to_opset18_forms; no op of those cases changed meaning between 13 and 25 otherwise: 19-25 added types and
// new values of attributes), must pass again; those holding an op whose opset-18 form the importer does not
// read must be refused as unsupported, naming it.
TEST_CASE("ONNX conformance cases of opsets 13-17, stamped opsets 18 and 25 in their forms") {
  REQUIRE(fs::is_directory(kDataRoot));
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(fs::path(kDataRoot) / "node"))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  int passed = 0, refused = 0, total = 0;
  std::map<std::string, int> per_op;
  for (const fs::path& c : cases) {
    std::string bytes;
    onnx::ModelProto m;
    if (!read_file(c / "model.onnx", &bytes) || !m.ParseFromString(bytes)) continue;
    int64_t opset = 0;
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (opset < 13 || opset > 17 || run_case(c).outcome != Outcome::kPassed) continue;
    CAPTURE(c.filename().string());
    for (int64_t stamp : {18, 25}) {
      CAPTURE(stamp);
      ++total;
      const CaseResult r = run_case(c, stamp);
      bool old_form_only = false;
      for (const std::string& op : r.ops) old_form_only |= op == "ScatterElements";
      if (old_form_only) {
        CHECK_MESSAGE(r.outcome == Outcome::kUnsupported, r.why);
        CHECK_MESSAGE(r.why.find("its opset-18 definition is not supported yet") != std::string::npos, r.why);
        refused += r.outcome == Outcome::kUnsupported;
        continue;
      }
      CHECK_MESSAGE(r.outcome == Outcome::kPassed, r.why);
      if (r.outcome != Outcome::kPassed) continue;
      ++passed;
      if (stamp == 18)
        for (const std::string& op : r.ops) ++per_op[op];
    }
  }
  std::string ops;
  for (const auto& [op, n] : per_op) ops += " " + op + ":" + std::to_string(n);
  MESSAGE(passed, " of ", total, " passing opset 13-17 cases pass stamped opset 18 and 25 (", refused,
          " refused: ScatterElements); per op at 18:", ops);
  CHECK(passed > 0);
}

// ONNX's cases of ops whose data they hold as int64 (Trilu) or double (CumSum), small integers all exact in
// float32, run with that data read as float32 (run_case's as_float): the same test of the mapping and kernels
// on the same values. The main table above counts them as unsupported (their input is not float32). Trilu's
// two cases of an empty tensor (a 0-length axis) are refused: vitrt tensors have no empty axes.
TEST_CASE("ONNX conformance cases of Trilu and CumSum, their integer and double data read as float32") {
  REQUIRE(fs::is_directory(kDataRoot));
  int passed = 0, total = 0;
  for (const auto& e : fs::directory_iterator(fs::path(kDataRoot) / "node")) {
    const std::string name = e.path().filename().string();
    const bool ours = name.rfind("test_tril", 0) == 0 || name.rfind("test_triu", 0) == 0 ||
                      name.rfind("test_cumsum", 0) == 0;
    if (!ours) continue;
    ++total;
    CAPTURE(name);
    const CaseResult r = run_case(e.path(), 0, true);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, "_zero") == 0) {
      CHECK_MESSAGE(r.outcome != Outcome::kPassed, "an empty tensor should be refused");
      continue;
    }
    CHECK_MESSAGE(r.outcome == Outcome::kPassed, r.why);
    passed += r.outcome == Outcome::kPassed;
  }
  MESSAGE(passed, " of ", total, " Trilu / CumSum cases pass with their data read as float32");
  CHECK(total == 25);
}
