// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/fold_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "common/checked_math.h"
#include "onnx/dropout_identity.h"
#include "onnx/fold_gather_nd.h"
#include "onnx/fold_scatter_nd.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {
namespace {

using NodeProto = onnx::NodeProto;
using TP = onnx::TensorProto;

const char* const kFoldable[] = {
    "Constant", "Identity",  "Dropout",   "Cast",       "Shape",  "Size",      "ConstantOfShape",
    "Range",    "Gather",    "Unsqueeze", "Squeeze",    "Concat", "Slice",     "Reshape",
    "Flatten",  "Transpose", "Expand",    "Add",        "Sub",    "Mul",       "Div",
    "Neg",      "Abs",       "Sqrt",      "Reciprocal", "Pow",    "Equal",     "Less",
    "Greater",  "Where",     "Not",       "Min",        "Max",    "Floor",     "Ceil",
    "EyeLike",  "Mod",       "And",       "Or",         "Xor",    "ScatterND", "GatherND",
    nullptr};

bool is_float_onnx(int32_t t) {
  return t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16 || t == TP::BFLOAT16;
}

// The product of the non-zero dimensions is bounded too (as onnx_tensor.cpp's for initializers): an empty
// [0, 2^62, 2^62] holds no element, but strides and shape products over it would overflow.
Status check_size(ImportContext& cx, const NodeProto& n, const std::vector<int64_t>& shape, int64_t* numel) {
  int64_t e = 1, nonzero = 1;
  for (int64_t d : shape) {
    if (d < 0) return cx.bad_node(n, "negative dimension in " + int_dims_str(shape));
    if (d != 0 && (!checked_mul(nonzero, d, &nonzero) || nonzero > kMaxFoldedElements))
      return cx.unsupported_node(n, "folding it at import would make a constant " + int_dims_str(shape) +
                                        ", more than the " + std::to_string(kMaxFoldedElements) +
                                        "-element limit on folded constants");
    e = d == 0 ? 0 : e * d;
  }
  *numel = e;
  return Status::Ok();
}

OnnxValue make(ConstKind kind, int32_t onnx_type, std::vector<int64_t> shape) {
  OnnxValue v;
  v.is_const = true;
  v.kind = kind;
  v.onnx_type = onnx_type;
  v.shape = std::move(shape);
  int64_t e = 1;
  for (int64_t d : v.shape) e *= d;
  if (kind == ConstKind::kFloat)
    v.f.resize(static_cast<size_t>(e));
  else
    v.i.resize(static_cast<size_t>(e));
  return v;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

// Copies element `src_index` of `src` to `dst_index` of `dst` (same kind).
void copy_elem(const OnnxValue& src, int64_t si, OnnxValue* dst, int64_t di) {
  if (src.kind == ConstKind::kFloat)
    dst->f[di] = src.f[si];
  else
    dst->i[di] = src.i[si];
}

// Gathers `out`'s elements from `src` through index_of(flat out multi-index) -> flat src index.
void gather_elems(const OnnxValue& src, OnnxValue* out,
                  const std::function<int64_t(const std::vector<int64_t>&)>& index_of) {
  const int64_t total = out->numel();
  std::vector<int64_t> idx(out->shape.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    copy_elem(src, index_of(idx), out, e);
    for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out->shape[d]) break;
      idx[d] = 0;
    }
  }
}

Status broadcast(ImportContext& cx, const NodeProto& n, const std::vector<const OnnxValue*>& in,
                 std::vector<int64_t>* out) {
  size_t rank = 0;
  for (const OnnxValue* v : in) rank = std::max(rank, v->shape.size());
  out->assign(rank, 1);
  for (const OnnxValue* v : in) {
    const size_t off = rank - v->shape.size();
    for (size_t d = 0; d < v->shape.size(); ++d) {
      int64_t& o = (*out)[off + d];
      const int64_t s = v->shape[d];
      if (s == o || s == 1) continue;
      if (o == 1) {
        o = s;
        continue;
      }
      return cx.bad_node(
          n, "inputs do not broadcast: " + int_dims_str(v->shape) + " against " + int_dims_str(*out));
    }
  }
  return Status::Ok();
}

// Flat index into `v` for a multi-index of the broadcast result.
int64_t bcast_index(const OnnxValue& v, const std::vector<int64_t>& idx) {
  const size_t off = idx.size() - v.shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < v.shape.size(); ++d) flat = flat * v.shape[d] + (v.shape[d] == 1 ? 0 : idx[off + d]);
  return flat;
}

// An integer element. A float never reaches integer arithmetic: any float input makes the result float,
// except for comparisons (they read as_double) and the logic ops and Where's condition (they read truthy); a
// float such as 1e30 or NaN has no int64 value to convert to.
SymDim as_sym(const OnnxValue& v, int64_t e) {
  return v.kind == ConstKind::kInt ? v.i[e] : SymDim{};
}
// ONNX's bool of an element, as numpy's bool(): non-zero, NaN included; a batch-dependent size is non-zero.
bool truthy(const OnnxValue& v, int64_t e) {
  return v.kind == ConstKind::kFloat ? v.f[e] != 0.0f : v.i[e].c != 0 || !v.i[e].is_static();
}
double as_double(const OnnxValue& v, int64_t e) {
  return v.kind == ConstKind::kFloat ? v.f[e] : static_cast<double>(v.i[e].c);
}

// Min or Max of every input's element (ONNX's take 1 or more inputs) in float32; NaN in any gives NaN, as
// numpy.minimum / numpy.maximum and the IR's Min / Max.
float fold_min_max(bool min, const std::vector<const OnnxValue*>& in, const std::vector<int64_t>& at) {
  float r = static_cast<float>(as_double(*in[0], at[0]));
  for (size_t k = 1; k < in.size(); ++k) {
    const float v = static_cast<float>(as_double(*in[k], at[k]));
    if (std::isnan(r) || std::isnan(v))
      r = std::numeric_limits<float>::quiet_NaN();
    else
      r = min ? std::min(r, v) : std::max(r, v);
  }
  return r;
}

// Elementwise ops over broadcast inputs. Int results stay SymDim where the arithmetic allows.
Status elementwise(ImportContext& cx, const NodeProto& n, const std::vector<const OnnxValue*>& in,
                   OnnxValue* out) {
  const std::string& op = n.op_type();
  std::vector<int64_t> shape;
  VITRT_RETURN_IF_ERROR(broadcast(cx, n, in, &shape));
  int64_t total;
  VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
  const bool logic = op == "Not" || op == "And" || op == "Or" || op == "Xor";
  const bool compare = op == "Equal" || op == "Less" || op == "Greater" || logic;
  bool any_float = false;
  for (const OnnxValue* v : in) any_float |= v->kind == ConstKind::kFloat && !(op == "Where" && v == in[0]);
  const ConstKind kind = compare ? ConstKind::kInt : any_float ? ConstKind::kFloat : ConstKind::kInt;
  const int32_t type = compare ? TP::BOOL : op == "Where" ? in[1]->onnx_type : in[0]->onnx_type;
  *out = make(kind, type, shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    std::vector<int64_t> at;
    for (const OnnxValue* v : in) at.push_back(bcast_index(*v, idx));
    if (op == "Where") {
      const bool cond = truthy(*in[0], at[0]);
      const OnnxValue& pick = *in[cond ? 1 : 2];
      if (kind == ConstKind::kFloat)
        out->f[e] = static_cast<float>(as_double(pick, at[cond ? 1 : 2]));
      else
        out->i[e] = as_sym(pick, at[cond ? 1 : 2]);
    } else if (kind == ConstKind::kFloat && !compare) {
      const double a = as_double(*in[0], at[0]);
      const double b = in.size() > 1 ? as_double(*in[1], at[1]) : 0;
      const float fa = static_cast<float>(a), fb = static_cast<float>(b);
      float r = 0;
      if (op == "Add")
        r = fa + fb;
      else if (op == "Sub")
        r = fa - fb;
      else if (op == "Mul")
        r = fa * fb;
      else if (op == "Div")
        r = fa / fb;
      else if (op == "Pow")
        r = std::pow(fa, fb);
      else if (op == "Neg")
        r = -fa;
      else if (op == "Abs")
        r = std::fabs(fa);
      else if (op == "Sqrt")
        r = std::sqrt(fa);
      else if (op == "Reciprocal")
        r = 1.0f / fa;
      else if (op == "Floor")
        r = std::floor(fa);
      else if (op == "Ceil")
        r = std::ceil(fa);
      else if (op == "Min" || op == "Max")
        r = fold_min_max(op == "Min", in, at);
      out->f[e] = r;
    } else {
      // Integer (SymDim) arithmetic and comparisons.
      const SymDim a = as_sym(*in[0], at[0]);
      const SymDim b = in.size() > 1 ? as_sym(*in[1], at[1]) : SymDim{};
      SymDim r;
      auto overflow = [&]() {
        return cx.bad_node(n, "integer overflow in " + a.str() + " " + op + " " + b.str());
      };
      auto batch_dependent = [&]() {
        return cx.unsupported_node(n, "its result " + a.str() + " " + op + " " + b.str() +
                                          " depends on the batch in a form the importer does not fold");
      };
      if (compare && any_float && !logic) {
        const double x = as_double(*in[0], at[0]), y = as_double(*in[1], at[1]);
        out->i[e] = SymDim::of(op == "Equal" ? x == y : op == "Less" ? x < y : x > y);
      } else if (op == "Add") {
        if (!checked_add(a.c, b.c, &r.c) || !checked_add(a.k, b.k, &r.k)) return overflow();
        out->i[e] = r;
      } else if (op == "Sub") {
        if (!checked_sub(a.c, b.c, &r.c) || !checked_sub(a.k, b.k, &r.k)) return overflow();
        out->i[e] = r;
      } else if (op == "Neg") {
        if (!checked_sub(0, a.c, &r.c) || !checked_sub(0, a.k, &r.k)) return overflow();
        out->i[e] = r;
      } else if (op == "Abs") {
        if (!a.is_static()) return batch_dependent();
        if (a.c == INT64_MIN) return overflow();
        out->i[e] = SymDim::of(a.c < 0 ? -a.c : a.c);
      } else if (op == "Mul") {
        if (!a.is_static() && !b.is_static()) return batch_dependent();
        const SymDim& s = a.is_static() ? b : a;
        const int64_t m = a.is_static() ? a.c : b.c;
        if (!checked_mul(s.c, m, &r.c) || !checked_mul(s.k, m, &r.k)) return overflow();
        out->i[e] = r;
      } else if (op == "Div") {
        if (!b.is_static()) return batch_dependent();
        if (b.c == 0) return cx.bad_node(n, "integer division by zero");
        if (b.c == -1 && (a.c == INT64_MIN || a.k == INT64_MIN)) return overflow();
        if (!a.is_static() && (a.c % b.c != 0 || a.k % b.c != 0)) return batch_dependent();
        out->i[e] = SymDim{a.c / b.c, a.k / b.c};
      } else if (op == "Min" || op == "Max") {
        int64_t m = a.c;
        for (size_t k = 0; k < in.size(); ++k) {
          const SymDim v = as_sym(*in[k], at[k]);
          if (!v.is_static()) return batch_dependent();
          m = op == "Min" ? std::min(m, v.c) : std::max(m, v.c);
        }
        out->i[e] = SymDim::of(m);
      } else if (op == "Not") {
        if (!a.is_static()) return batch_dependent();
        out->i[e] = SymDim::of(!truthy(*in[0], at[0]));
      } else if (logic) {
        if (!a.is_static() || !b.is_static()) return batch_dependent();
        const bool x = truthy(*in[0], at[0]), y = truthy(*in[1], at[1]);
        out->i[e] = SymDim::of(op == "And" ? x && y : op == "Or" ? x || y : x != y);
      } else if (op == "Mod") {
        // fmod = 1: C's remainder (the dividend's sign); fmod = 0: the divisor's sign, as numpy.mod (ONNX's
        // reference implementation). c + k·B mod m is c mod m when m divides k (fmod 0 only: C's remainder
        // depends on the sign of the whole dividend).
        if (!b.is_static()) return batch_dependent();
        if (b.c == 0) return cx.bad_node(n, "integer modulo by zero");
        const bool fmod = cx.attr_int(n, "fmod", 0) != 0;
        if (!a.is_static() && (fmod || a.k % b.c != 0)) return batch_dependent();
        int64_t r = b.c == -1 ? 0 : a.c % b.c;
        if (!fmod && r != 0 && ((r < 0) != (b.c < 0))) r += b.c;
        out->i[e] = SymDim::of(r);
      } else if (op == "Equal" || op == "Less" || op == "Greater") {
        if (a.is_static() && b.is_static()) {
          out->i[e] = SymDim::of(op == "Equal" ? a.c == b.c : op == "Less" ? a.c < b.c : a.c > b.c);
        } else {
          // A batch-dependent size (k > 0, c >= 0 holds at every batch >= 1) against a constant below 1:
          // torch's expand(B, -1, -1) export compares the shape with -1.
          const SymDim& s = a.is_static() ? b : a;
          const int64_t c = a.is_static() ? a.c : b.c;
          if (s.k > 0 && s.c >= 0 && c < 1 && op == "Equal") {
            out->i[e] = SymDim::of(0);
          } else {
            return batch_dependent();
          }
        }
      } else {
        return cx.unsupported_node(n, "integer " + op + " is not folded");
      }
    }
    for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status scalar_of(ImportContext& cx, const NodeProto& n, const OnnxValue& v, const char* what, double* out) {
  if (v.numel() != 1) return cx.bad_node(n, std::string(what) + " must hold one value");
  if (v.kind == ConstKind::kInt && !v.i[0].is_static())
    return cx.unsupported_node(n, std::string(what) + " depends on the batch");
  *out = as_double(v, 0);
  return Status::Ok();
}

// Axes from the attribute (older opsets) or the optional input `input_index` (newer ones).
Status axes_of(ImportContext& cx, const NodeProto& n, int input_index, std::vector<int64_t>* axes,
               bool* given) {
  *given = false;
  if (cx.attr(n, "axes")) {
    *axes = cx.attr_ints(n, "axes");
    *given = true;
  } else if (cx.has_input(n, input_index)) {
    OnnxValue* a;
    VITRT_RETURN_IF_ERROR(cx.input(n, input_index, &a));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *a, "axes", axes));
    *given = true;
  }
  return Status::Ok();
}

Status reshape_shape(ImportContext& cx, const NodeProto& n, const std::vector<int64_t>& in,
                     std::vector<int64_t> target, bool allowzero, std::vector<int64_t>* out) {
  int infer = -1;
  int64_t known = 1, total = 1, nonzero = 1;  // nonzero: bounded as check_size's, for empty targets
  for (int64_t d : in) total *= d;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && !allowzero) {
      if (d >= in.size()) return cx.bad_node(n, "shape copies dimension " + std::to_string(d) + " it lacks");
      target[d] = in[d];
    }
    if (target[d] == -1) {
      if (infer >= 0) return cx.bad_node(n, "shape has two -1 dimensions");
      infer = static_cast<int>(d);
      continue;
    }
    if (target[d] < 0) return cx.bad_node(n, "shape has a negative dimension");
    if (!checked_mul(known, target[d], &known)) return cx.bad_node(n, "shape overflows");
    if (target[d] != 0 && (!checked_mul(nonzero, target[d], &nonzero) || nonzero > kMaxOnnxTensorElements))
      return cx.bad_node(n, "shape " + int_dims_str(target) + " has more than " +
                                std::to_string(kMaxOnnxTensorElements) +
                                " elements (counting its non-zero dimensions)");
  }
  if (infer >= 0) {
    if (known == 0 || total % known) return cx.bad_node(n, "cannot infer the -1 dimension");
    target[infer] = total / known;
  } else if (known != total) {
    return cx.bad_node(n, "shape " + int_dims_str(target) + " does not hold the " + std::to_string(total) +
                              " elements of " + int_dims_str(in));
  }
  *out = std::move(target);
  return Status::Ok();
}

Status fold(ImportContext& cx, const NodeProto& n, std::vector<OnnxValue*>& in, OnnxValue* out) {
  const std::string& op = n.op_type();
  auto float_attr_value = [&](const char* name, ConstKind kind, int32_t type) -> bool {
    const auto* a = cx.attr(n, name);
    if (!a) return false;
    const bool list = a->type() == onnx::AttributeProto::FLOATS || a->type() == onnx::AttributeProto::INTS;
    *out = make(kind, type,
                list ? std::vector<int64_t>{kind == ConstKind::kFloat ? a->floats_size() : a->ints_size()}
                     : std::vector<int64_t>{});
    for (int64_t e = 0; e < out->numel(); ++e) {
      if (kind == ConstKind::kFloat)
        out->f[e] = list ? a->floats(static_cast<int>(e)) : a->f();
      else
        out->i[e] = SymDim::of(list ? a->ints(static_cast<int>(e)) : a->i());
    }
    return true;
  };
  if (op == "Constant") {
    if (const auto* a = cx.attr(n, "value")) {
      return tensor_to_value(a->t(), "attribute 'value' of " + cx.where(n), &cx.external(), out);
    }
    if (float_attr_value("value_float", ConstKind::kFloat, TP::FLOAT)) return Status::Ok();
    if (float_attr_value("value_floats", ConstKind::kFloat, TP::FLOAT)) return Status::Ok();
    if (float_attr_value("value_int", ConstKind::kInt, TP::INT64)) return Status::Ok();
    if (float_attr_value("value_ints", ConstKind::kInt, TP::INT64)) return Status::Ok();
    return cx.unsupported_node(n, "only tensor, float(s) and int(s) values are supported");
  }
  if (op == "Identity" || op == "Dropout") {
    *out = *in[0];
    out->ir_constant = -1;
    return Status::Ok();
  }
  if (op == "Cast") {
    const int32_t to = static_cast<int32_t>(cx.attr_int(n, "to", 0));
    const OnnxValue& s = *in[0];
    if (to == TP::STRING || !onnx::TensorProto_DataType_IsValid(to))
      return cx.unsupported_node(n, "cast to " + onnx_type_name(to));
    const bool to_float = is_float_onnx(to);
    *out = make(to_float ? ConstKind::kFloat : ConstKind::kInt, to, s.shape);
    for (int64_t e = 0; e < s.numel(); ++e) {
      if (to_float) {
        if (s.kind == ConstKind::kInt && !s.i[e].is_static())
          return cx.unsupported_node(n, "casts a batch-dependent size to float");
        out->f[e] = static_cast<float>(as_double(s, e));
      } else if (s.kind == ConstKind::kInt) {
        out->i[e] = to == TP::BOOL ? SymDim::of(s.i[e] != SymDim::of(0)) : s.i[e];
      } else {
        const float x = s.f[e];
        if (!std::isfinite(x) || std::fabs(x) > 9.2e18f)
          return cx.bad_node(n, "casts a non-finite or huge float to an integer");
        out->i[e] = SymDim::of(to == TP::BOOL ? (x != 0) : static_cast<int64_t>(x));
      }
    }
    return Status::Ok();
  }
  if (op == "Shape" || op == "Size") {
    const OnnxValue& s = *in[0];
    std::vector<SymDim> dims;
    if (s.pending_expand)
      dims = s.expanded;
    else if (s.is_const)
      for (int64_t d : s.shape) dims.push_back(SymDim::of(d));
    else
      dims = s.dims;
    if (op == "Size") {
      SymDim p = SymDim::of(1);
      for (const SymDim& d : dims) {
        if (!p.is_static() && !d.is_static())
          return cx.unsupported_node(n, "the size of " + sym_dims_str(dims) + " is not linear in the batch");
        p = p.is_static() ? SymDim{d.c * p.c, d.k * p.c} : SymDim{p.c * d.c, p.k * d.c};
      }
      *out = make(ConstKind::kInt, TP::INT64, {});
      out->i[0] = p;
      return Status::Ok();
    }
    const int64_t r = static_cast<int64_t>(dims.size());
    int64_t start = cx.attr_int(n, "start", 0), end = cx.attr_int(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    *out = make(ConstKind::kInt, TP::INT64, {end - start});
    for (int64_t d = start; d < end; ++d) out->i[d - start] = dims[d];
    return Status::Ok();
  }
  if (op == "EyeLike") {
    // Ones where column − row = k, zeros elsewhere, in the input's shape (SOFT's Newton iteration exports
    // torch.eye(m) as EyeLike of a ConstantOfShape). Activations always hold the batch, so only constants
    // fold.
    const OnnxValue& s = *in[0];
    const std::vector<int64_t>& shape = s.shape;
    if (shape.size() != 2) return cx.bad_node(n, "its input must be 2-D, got " + int_dims_str(shape));
    const int32_t type = static_cast<int32_t>(cx.attr_int(n, "dtype", s.onnx_type));
    if (type == TP::STRING || !onnx::TensorProto_DataType_IsValid(type) || type == TP::UNDEFINED)
      return cx.unsupported_node(n, "dtype " + onnx_type_name(type));
    const int64_t k = cx.attr_int(n, "k", 0);
    int64_t total;
    VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
    *out = make(is_float_onnx(type) ? ConstKind::kFloat : ConstKind::kInt, type, shape);
    for (int64_t r = 0; r < shape[0]; ++r) {
      // Column r + k, when it is inside the row (k is untrusted: compare without forming r + k).
      if (k < -r || k >= shape[1] - r) continue;
      const int64_t e = r * shape[1] + (r + k);
      if (out->kind == ConstKind::kFloat)
        out->f[e] = 1.0f;
      else
        out->i[e] = SymDim::of(1);
    }
    return Status::Ok();
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape;
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[0], "the shape", &shape));
    int64_t total;
    VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
    OnnxValue fill = make(ConstKind::kFloat, TP::FLOAT, {1});
    if (const auto* a = cx.attr(n, "value"))
      VITRT_RETURN_IF_ERROR(
          tensor_to_value(a->t(), "attribute 'value' of " + cx.where(n), &cx.external(), &fill));
    if (fill.numel() != 1) return cx.bad_node(n, "value must hold one element");
    *out = make(fill.kind, fill.onnx_type, shape);
    for (int64_t e = 0; e < total; ++e) copy_elem(fill, 0, out, e);
    return Status::Ok();
  }
  if (op == "Range") {
    double start, limit, delta;
    VITRT_RETURN_IF_ERROR(scalar_of(cx, n, *in[0], "start", &start));
    VITRT_RETURN_IF_ERROR(scalar_of(cx, n, *in[1], "limit", &limit));
    VITRT_RETURN_IF_ERROR(scalar_of(cx, n, *in[2], "delta", &delta));
    if (delta == 0) return cx.bad_node(n, "delta is 0");
    const double bound = 4611686018427387904.0;  // 2^62: integer ranges stay far from int64 overflow
    if (!(std::fabs(start) < bound && std::fabs(limit) < bound && std::fabs(delta) < bound))
      return cx.bad_node(n, "start, limit or delta is not finite or out of range");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (!(count <= static_cast<double>(kMaxFoldedElements)))
      return cx.unsupported_node(n, "the range would exceed the folded-constant limit");
    *out = make(in[0]->kind, in[0]->onnx_type, {static_cast<int64_t>(count)});
    for (int64_t e = 0; e < static_cast<int64_t>(count); ++e) {
      if (out->kind == ConstKind::kFloat)
        out->f[e] = static_cast<float>(start + e * delta);
      else
        out->i[e] = SymDim::of(static_cast<int64_t>(start) + e * static_cast<int64_t>(delta));
    }
    return Status::Ok();
  }
  if (op == "Gather") {
    const OnnxValue& data = *in[0];
    int axis;
    VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), data.rank(), &axis));
    std::vector<int64_t> idx;
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[1], "indices", &idx));
    const int64_t dim = data.shape[axis];
    for (int64_t& i : idx) {
      if (i < -dim || i >= dim) return cx.bad_node(n, "index " + std::to_string(i) + " out of range");
      if (i < 0) i += dim;
    }
    std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
    shape.insert(shape.end(), in[1]->shape.begin(), in[1]->shape.end());
    shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    int64_t total;
    VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
    *out = make(data.kind, data.onnx_type, shape);
    const auto st = strides_of(data.shape);
    const size_t ir = in[1]->shape.size();
    gather_elems(data, out, [&](const std::vector<int64_t>& o) {
      int64_t flat = 0, ii = 0;
      for (size_t d = 0; d < ir; ++d) ii = ii * in[1]->shape[d] + o[axis + d];
      for (int d = 0; d < axis; ++d) flat += o[d] * st[d];
      flat += idx[ii] * st[axis];
      for (size_t d = axis + 1; d < data.shape.size(); ++d) flat += o[d - 1 + ir] * st[d];
      return flat;
    });
    return Status::Ok();
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    const OnnxValue& s = *in[0];
    std::vector<int64_t> shape;
    if (op == "Reshape") {
      std::vector<int64_t> target;
      VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[1], "the shape", &target));
      VITRT_RETURN_IF_ERROR(
          reshape_shape(cx, n, s.shape, target, cx.attr_int(n, "allowzero", 0) != 0, &shape));
    } else if (op == "Flatten") {
      int axis;
      VITRT_RETURN_IF_ERROR(onnx_flatten_axis(cx, n, s.rank(), &axis));
      int64_t a = 1, b = 1;
      for (int d = 0; d < s.rank(); ++d) (d < axis ? a : b) *= s.shape[d];
      shape = {a, b};
    } else {
      std::vector<int64_t> axes;
      bool given;
      VITRT_RETURN_IF_ERROR(axes_of(cx, n, 1, &axes, &given));
      const int out_rank = op == "Unsqueeze" ? s.rank() + static_cast<int>(axes.size()) : s.rank();
      std::vector<bool> mark(static_cast<size_t>(out_rank), false);
      for (int64_t a : axes) {
        int ax;
        VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, a, out_rank, &ax));
        mark[ax] = true;
      }
      if (op == "Unsqueeze") {
        size_t k = 0;
        for (int d = 0; d < out_rank; ++d) shape.push_back(mark[d] ? 1 : s.shape[k++]);
      } else {
        for (int d = 0; d < s.rank(); ++d) {
          if ((given && mark[d]) || (!given && s.shape[d] == 1)) {
            if (s.shape[d] != 1)
              return cx.bad_node(n, "squeezes an axis of size " + std::to_string(s.shape[d]));
            continue;
          }
          shape.push_back(s.shape[d]);
        }
      }
    }
    *out = s;
    out->ir_constant = -1;
    out->shape = shape;
    return Status::Ok();
  }
  if (op == "Concat") {
    const int rank = in[0]->rank();
    int axis;
    VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, cx.attr_int(n, "axis", 0), rank, &axis));
    std::vector<int64_t> shape = in[0]->shape;
    shape[axis] = 0;
    bool any_float = false;
    for (const OnnxValue* v : in) {
      if (v->rank() != rank) return cx.bad_node(n, "inputs differ in rank");
      for (int d = 0; d < rank; ++d)
        if (d != axis && v->shape[d] != shape[d]) return cx.bad_node(n, "inputs differ off the axis");
      shape[axis] += v->shape[axis];
      any_float |= v->kind == ConstKind::kFloat;
    }
    for (const OnnxValue* v : in)
      if ((v->kind == ConstKind::kFloat) != any_float)
        return cx.bad_node(n, "inputs mix float and integer types");
    int64_t total;
    VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
    *out = make(in[0]->kind, in[0]->onnx_type, shape);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < rank; ++d) inner *= shape[d];
    int64_t e = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const OnnxValue* v : in) {
        const int64_t chunk = v->shape[axis] * inner;
        for (int64_t j = 0; j < chunk; ++j) copy_elem(*v, o * chunk + j, out, e++);
      }
    return Status::Ok();
  }
  if (op == "Slice") {
    const OnnxValue& s = *in[0];
    std::vector<int64_t> starts, ends, axes, steps;
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[1], "starts", &starts));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[2], "ends", &ends));
    if (in.size() > 3 && in[3]) VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[3], "axes", &axes));
    if (in.size() > 4 && in[4]) VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[4], "steps", &steps));
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return cx.bad_node(n, "starts, ends, axes and steps differ in length");
    std::vector<int64_t> first(s.shape.size(), 0), step(s.shape.size(), 1), shape = s.shape;
    for (size_t i = 0; i < starts.size(); ++i) {
      int ax;
      VITRT_RETURN_IF_ERROR(onnx_axis(cx, n, axes[i], s.rank(), &ax));
      const int64_t dim = s.shape[ax];
      if (steps[i] == 0) return cx.bad_node(n, "step 0");
      // A step beyond the axis takes at most one element either way; clamping keeps the arithmetic small.
      const int64_t st = std::clamp<int64_t>(steps[i], -(dim + 1), dim + 1);
      int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
      int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
      if (st > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        shape[ax] = e > b ? (e - b + st - 1) / st : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        shape[ax] = b > e ? (b - e - st - 1) / -st : 0;
      }
      first[ax] = b;
      step[ax] = st;
    }
    *out = make(s.kind, s.onnx_type, shape);
    const auto str = strides_of(s.shape);
    gather_elems(s, out, [&](const std::vector<int64_t>& o) {
      int64_t flat = 0;
      for (size_t d = 0; d < o.size(); ++d) flat += (first[d] + o[d] * step[d]) * str[d];
      return flat;
    });
    return Status::Ok();
  }
  if (op == "Transpose") {
    const OnnxValue& s = *in[0];
    std::vector<int64_t> perm = cx.attr_ints(n, "perm");
    if (perm.empty())
      for (int d = s.rank() - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int>(perm.size()) != s.rank()) return cx.bad_node(n, "perm has the wrong length");
    std::vector<bool> seen(perm.size(), false);
    std::vector<int64_t> shape;
    for (int64_t p : perm) {
      if (p < 0 || p >= s.rank() || seen[p]) return cx.bad_node(n, "perm is not a permutation");
      seen[p] = true;
      shape.push_back(s.shape[p]);
    }
    *out = make(s.kind, s.onnx_type, shape);
    const auto str = strides_of(s.shape);
    gather_elems(s, out, [&](const std::vector<int64_t>& o) {
      int64_t flat = 0;
      for (size_t d = 0; d < o.size(); ++d) flat += o[d] * str[perm[d]];
      return flat;
    });
    return Status::Ok();
  }
  if (op == "Expand") {
    std::vector<int64_t> target;
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *in[1], "the shape", &target));
    // broadcast() reads only the shape: the untrusted target is never materialised as data.
    OnnxValue shape_only;
    shape_only.shape = target;
    std::vector<int64_t> shape;
    VITRT_RETURN_IF_ERROR(broadcast(cx, n, {in[0], &shape_only}, &shape));
    int64_t total;
    VITRT_RETURN_IF_ERROR(check_size(cx, n, shape, &total));
    *out = make(in[0]->kind, in[0]->onnx_type, shape);
    gather_elems(*in[0], out, [&](const std::vector<int64_t>& o) { return bcast_index(*in[0], o); });
    return Status::Ok();
  }
  if (op == "ScatterND") return fold_scatter_nd(cx, n, *in[0], *in[1], *in[2], out);
  if (op == "GatherND") return fold_gather_nd(cx, n, *in[0], *in[1], out);
  if (op == "Mod") {
    const int64_t fmod = cx.attr_int(n, "fmod", 0);
    if (fmod != 0 && fmod != 1) return cx.bad_node(n, "fmod " + std::to_string(fmod) + ", expected 0 or 1");
  }
  std::vector<const OnnxValue*> args(in.begin(), in.end());
  if (op == "Where" && args.size() != 3) return cx.bad_node(n, "needs 3 inputs");
  return elementwise(cx, n, args, out);
}

}  // namespace

const char* const* foldable_ops() {
  return kFoldable;
}

Status fold_node(ImportContext& cx, const NodeProto& n, bool* folded) {
  *folded = false;
  const std::string& op = n.op_type();
  bool known = false;
  for (const char* const* p = kFoldable; *p; ++p) known |= op == *p;
  if (!known) return Status::Ok();
  std::vector<OnnxValue*> in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    OnnxValue* v;
    VITRT_RETURN_IF_ERROR(cx.input(n, i, &v));
    // Shape and Size read only the shape; everything else folds only from constants. An Expand to the batch
    // (onnx_value.h) is no constant: its reader is lowered (or refused) instead.
    const bool shape_only = i == 0 && (op == "Shape" || op == "Size");
    if ((!v->is_const || v->pending_expand) && !shape_only) return Status::Ok();
    in.push_back(v);
  }
  // Float remainders are computed by the IR's Fmod / Mod kernels (fold_by_reference.h); integer ones here.
  if (op == "Mod")
    for (const OnnxValue* v : in)
      if (v && v->kind == ConstKind::kFloat) return Status::Ok();
  // An Expand to a batch-dependent shape is no constant: the lowering keeps it for the Concat that reads it.
  if (op == "Expand" && in.size() > 1 && in[1])
    for (const SymDim& d : in[1]->i)
      if (!d.is_static()) return Status::Ok();
  // The inputs each op reads unconditionally must be there (a hostile node may have any number).
  static const std::map<std::string, size_t> kRequired = {
      {"Constant", 0}, {"Range", 3}, {"Where", 3},   {"Slice", 3},     {"Gather", 2},  {"Reshape", 2},
      {"Expand", 2},   {"Add", 2},   {"Sub", 2},     {"Mul", 2},       {"Div", 2},     {"Pow", 2},
      {"Equal", 2},    {"Less", 2},  {"Greater", 2}, {"Min", 1},       {"Max", 1},     {"Mod", 2},
      {"And", 2},      {"Or", 2},    {"Xor", 2},     {"ScatterND", 3}, {"GatherND", 2}};
  const auto req = kRequired.find(op);
  const size_t required = req == kRequired.end() ? 1 : req->second;
  // Every op but these (whose optional inputs are read only when present) reads every input it is given.
  const bool reads_all = op != "Slice" && op != "Unsqueeze" && op != "Squeeze" && op != "Dropout";
  if (in.size() < required) return cx.bad_node(n, "needs " + std::to_string(required) + " inputs");
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i] && (i < required || reads_all))
      return cx.bad_node(n, "input " + std::to_string(i) + " is missing");
  if (op == "Dropout") VITRT_RETURN_IF_ERROR(check_dropout_identity(cx, n));
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(fold(cx, n, in, &out));
  if (n.output_size() < 1) return cx.bad_node(n, "has no output");
  // As initializers (onnx_tensor.cpp): an IR shape holds at most kMaxRank dimensions, and a constant of more
  // would reach the graph with a shape that cannot say what its values are.
  if (out.shape.size() > static_cast<size_t>(kMaxRank))
    return cx.unsupported_node(n, "folding it makes a constant of rank " + std::to_string(out.shape.size()) +
                                      " " + int_dims_str(out.shape) + " (at most " +
                                      std::to_string(kMaxRank) + ")");
  cx.set(n.output(0), std::move(out));
  *folded = true;
  return Status::Ok();
}

}  // namespace vitrt::convert
