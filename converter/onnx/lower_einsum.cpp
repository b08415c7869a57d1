// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Einsum of two operands that is a batched matrix product (attention's "bhid,bhjd->bhij", "bhij,bhjd->bhid",
// "bij,bjk->bik", "...ij,...jk->...ik" and their transposed forms), lowered exactly onto Transpose + MatMul
// (+ Reshape) (docs/onnx.md). Each index is one of: batch (both operands and the output; MatMul broadcasts a
// size 1), contracted (both operands, not the output), row (first operand and output), column (second operand
// and output). Operand A is permuted to [batch, rows, contracted] and B to [batch, contracted, columns], the
// rows, contracted and columns groups are each merged into one axis, MatMul multiplies, and the result is
// split and permuted to the output's order. Three operands (explicit letters) are two such products in turn.
// Anything else (an index summed within one operand, a repeated index (a diagonal)) is refused naming the
// equation.
#include <algorithm>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// One operand's or the output's indices, with "..." expanded to `ellipsis` indices named '0', '1', ...
// counted from the right (so that broadcast ellipsis axes line up); false when malformed.
bool parse_term(const std::string& term, int ellipsis, std::string* out) {
  out->clear();
  bool seen = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (seen || ellipsis < 0) return false;
      seen = true;
      for (int k = ellipsis - 1; k >= 0; --k) out->push_back(static_cast<char>('0' + k));
      i += 2;
    } else if (is_letter(term[i])) {
      out->push_back(term[i]);
    } else {
      return false;
    }
  }
  return true;
}

int letters_in(const std::string& term) {
  return static_cast<int>(std::count_if(term.begin(), term.end(), is_letter));
}

// The product of a group of dimensions, at most one of them batch-dependent.
bool product(const std::vector<SymDim>& dims, SymDim* out) {
  SymDim p = SymDim::of(1);
  for (const SymDim& d : dims) {
    if (!p.is_static() && !d.is_static()) return false;
    const SymDim& scaled = p.is_static() ? d : p;  // (c + kB)·s
    const int64_t s = p.is_static() ? p.c : d.c;
    SymDim q;
    if (!checked_mul(scaled.c, s, &q.c) || !checked_mul(scaled.k, s, &q.k)) return false;
    p = q;
  }
  *out = p;
  return true;
}

// Transposes activation `v` (indices `have`) into the order `want` when it differs.
Status permute(ImportContext& cx, const NodeProto& n, OnnxValue* v, const std::string& have,
               const std::string& want, const std::string& name) {
  if (have == want) return Status::Ok();
  std::vector<int32_t> perm;
  for (char c : want) perm.push_back(static_cast<int32_t>(have.find(c)));
  OnnxValue out;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kTranspose, TransposeAttrs{perm}, {v->tensor}, name, &out));
  *v = std::move(out);
  return Status::Ok();
}

// The two-operand einsum a,b->o of va and vb (activations with their dims), lowered into the value named
// `out`.
Status contract(ImportContext& cx, const NodeProto& n, const std::string& eq, OnnxValue va, OnnxValue vb,
                const std::string& a, const std::string& b, const std::string& o, const std::string& out,
                OnnxValue* result) {
  auto refuse = [&](const std::string& why) {
    return cx.unsupported_node(n, "equation '" + eq + "': " + why);
  };
  const std::vector<SymDim> xd = va.dims, yd = vb.dims;
  // Classify every index; sizes by index.
  std::string batch, rows, inner, cols;
  std::map<char, SymDim> size;
  for (const std::string* term : {&a, &b, &o})
    for (char c : *term)
      if (std::count(term->begin(), term->end(), c) != 1)
        return refuse(std::string("index '") + c + "' repeats");
  for (size_t i = 0; i < a.size(); ++i) size[a[i]] = xd[i];
  for (size_t i = 0; i < b.size(); ++i) {
    const char c = b[i];
    auto it = size.find(c);
    if (it == size.end() || it->second == SymDim::of(1)) {
      size[c] = yd[i];
    } else if (yd[i] != it->second && yd[i] != SymDim::of(1)) {
      return cx.bad_node(n, std::string("index '") + c + "' is " + it->second.str() + " and " + yd[i].str());
    }
  }
  for (char c : o)
    if (!size.count(c))
      return cx.bad_node(n,
                         "equation '" + eq + "': output index '" + std::string(1, c) + "' is in no operand");
  for (char c : o) {  // output order for batch, rows and columns
    const bool in_a = a.find(c) != std::string::npos, in_b = b.find(c) != std::string::npos;
    (in_a && in_b ? batch : in_a ? rows : cols).push_back(c);
  }
  for (char c : a) {
    if (o.find(c) != std::string::npos) continue;
    if (b.find(c) == std::string::npos)
      return refuse(std::string("index '") + c + "' is summed within one operand");
    inner.push_back(c);
  }
  for (char c : b)
    if (o.find(c) == std::string::npos && a.find(c) == std::string::npos)
      return refuse(std::string("index '") + c + "' is summed within one operand");
  for (char c : inner) {
    const SymDim da = xd[a.find(c)], db = yd[b.find(c)];
    if (da != db)
      return refuse(std::string("contracted index '") + c + "' is " + da.str() + " and " + db.str());
  }
  auto dims = [&](const std::string& idx, const std::vector<SymDim>& d, const std::string& term) {
    std::vector<SymDim> r;
    for (char c : idx) r.push_back(d[term.find(c)]);
    return r;
  };
  auto group = [&](const std::string& idx, const std::vector<SymDim>& d, const std::string& term, SymDim* p) {
    return product(dims(idx, d, term), p);
  };
  SymDim m, k, nn;
  if (!group(rows, xd, a, &m) || !group(inner, xd, a, &k) || !group(cols, yd, b, &nn))
    return refuse("merges the batch with another batch-dependent axis");
  VITRT_RETURN_IF_ERROR(permute(cx, n, &va, a, batch + rows + inner, out + ".a_t"));
  VITRT_RETURN_IF_ERROR(permute(cx, n, &vb, b, batch + inner + cols, out + ".b_t"));
  auto matrix = [&](OnnxValue* v, const std::vector<SymDim>& lead, SymDim r, SymDim c,
                    const std::string& name) {
    std::vector<SymDim> to(lead.begin(), lead.begin() + batch.size());
    to.push_back(r);
    to.push_back(c);
    if (to == v->dims) return Status::Ok();
    OnnxValue w;
    VITRT_RETURN_IF_ERROR(reshape_to(cx, n, v->tensor, v->dims, to, name, &w));
    *v = std::move(w);
    return Status::Ok();
  };
  VITRT_RETURN_IF_ERROR(matrix(&va, va.dims, m, k, out + ".a_2d"));
  VITRT_RETURN_IF_ERROR(matrix(&vb, vb.dims, k, nn, out + ".b_2d"));
  // MatMul, split [rows·cols] back into the row and column indices, permute to the output order.
  const std::string split_order = batch + rows + cols;
  std::vector<SymDim> split;
  OnnxValue r;
  const bool reshape = rows.size() != 1 || cols.size() != 1, transpose = split_order != o;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMatMul, NoAttrs{}, {va.tensor, vb.tensor},
                                  reshape || transpose ? out + ".product" : out, &r));
  if (reshape) {
    for (size_t i = 0; i < batch.size(); ++i) split.push_back(r.dims[i]);
    for (char c : rows + cols) split.push_back(size[c]);
    OnnxValue s;
    VITRT_RETURN_IF_ERROR(reshape_to(cx, n, r.tensor, r.dims, split, transpose ? out + ".split" : out, &s));
    r = std::move(s);
  }
  VITRT_RETURN_IF_ERROR(permute(cx, n, &r, split_order, o, out));
  *result = std::move(r);
  return Status::Ok();
}

// Three operands with explicit letters and output ("nlhd,nhmd,nlh->nlhm", the Linear Transformer's last
// einsum): the first two contracted over the indices neither the third operand nor the output has, into the
// remaining indices in order of appearance, then that product with the third. Each step is a two-operand
// einsum lowered as above, so the sums are exact products of one matrix multiplication each.
Status lower_einsum3(ImportContext& cx, const NodeProto& n, const std::string& eq) {
  auto refuse = [&](const std::string& why) {
    return cx.unsupported_node(n, "equation '" + eq + "': " + why);
  };
  const size_t arrow = eq.find("->");
  if (arrow == std::string::npos || eq.find("...") != std::string::npos)
    return refuse("three operands need explicit letters and an explicit output");
  const size_t c1 = eq.find(','), c2 = eq.find(',', c1 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos || c2 > arrow || eq.find(',', c2 + 1) < arrow)
    return refuse("not three operands");
  const std::string terms[3] = {eq.substr(0, c1), eq.substr(c1 + 1, c2 - c1 - 1),
                                eq.substr(c2 + 1, arrow - c2 - 1)};
  const std::string o = eq.substr(arrow + 2);
  OnnxValue v[3];
  for (int i = 0; i < 3; ++i) {
    OnnxValue* x;
    VITRT_RETURN_IF_ERROR(cx.input(n, i, &x));
    v[i] = *x;
    v[i].dims = dims_of(*x);
    VITRT_RETURN_IF_ERROR(tensor_of(cx, n, i, &v[i].tensor));
    v[i].is_const = false;
    std::string parsed;
    if (!parse_term(terms[i], 0, &parsed) || parsed.size() != v[i].dims.size())
      return cx.bad_node(n, "equation '" + eq + "' does not match operand " + std::to_string(i) + " " +
                                sym_dims_str(v[i].dims));
  }
  std::string o_parsed;
  if (!parse_term(o, 0, &o_parsed)) return cx.bad_node(n, "equation '" + eq + "' is malformed");
  std::string mid;  // the indices of the first product: those the third operand or the output still needs
  for (char c : terms[0] + terms[1])
    if (mid.find(c) == std::string::npos &&
        (terms[2].find(c) != std::string::npos || o.find(c) != std::string::npos))
      mid.push_back(c);
  const std::string out = n.output(0);
  OnnxValue ab, r;
  VITRT_RETURN_IF_ERROR(contract(cx, n, eq, v[0], v[1], terms[0], terms[1], mid, out + ".ab", &ab));
  VITRT_RETURN_IF_ERROR(contract(cx, n, eq, ab, v[2], mid, terms[2], o, out, &r));
  cx.set(out, std::move(r));
  return Status::Ok();
}

Status lower_einsum(ImportContext& cx, int, const NodeProto& n) {
  std::string eq;
  for (char c : cx.attr_string(n, "equation", ""))
    if (c != ' ') eq.push_back(c);
  auto refuse = [&](const std::string& why) {
    return cx.unsupported_node(n, "equation '" + eq + "': " + why);
  };
  if (n.input_size() == 3) return lower_einsum3(cx, n, eq);
  if (n.input_size() != 2)
    return refuse(std::to_string(n.input_size()) + " operands (two or three are supported)");
  OnnxValue *x, *y;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &y));
  const std::vector<SymDim> xd = dims_of(*x), yd = dims_of(*y);
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (comma == std::string::npos || comma > arrow || eq.find(',', comma + 1) < arrow)
    return refuse("not two operands");
  const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow - comma - 1);
  const int ea = static_cast<int>(xd.size()) - letters_in(ta),
            eb = static_cast<int>(yd.size()) - letters_in(tb);
  std::string a, b, o;
  if (!parse_term(ta, ta.find("...") == std::string::npos ? 0 : ea, &a) ||
      !parse_term(tb, tb.find("...") == std::string::npos ? 0 : eb, &b) || a.size() != xd.size() ||
      b.size() != yd.size())
    return cx.bad_node(
        n, "equation '" + eq + "' does not match operands " + sym_dims_str(xd) + " and " + sym_dims_str(yd));
  if (arrow == std::string::npos) {  // implicit output: the ellipsis, then indices used once, sorted
    std::string once;
    for (char c : a + b)
      if (is_letter(c) && std::count(a.begin(), a.end(), c) + std::count(b.begin(), b.end(), c) == 1)
        once.push_back(c);
    std::sort(once.begin(), once.end());
    for (char c : a.size() >= b.size() ? a : b)
      if (!is_letter(c)) o.push_back(c);
    o += once;
  } else if (!parse_term(eq.substr(arrow + 2), std::max(ea, eb), &o)) {
    return cx.bad_node(n, "equation '" + eq + "' is malformed");
  }
  const std::string out = n.output(0);
  OnnxValue va = *x, vb = *y;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &va.tensor));
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 1, &vb.tensor));
  va.is_const = vb.is_const = false;
  va.dims = xd;
  vb.dims = yd;
  OnnxValue r;
  VITRT_RETURN_IF_ERROR(contract(cx, n, eq, va, vb, a, b, o, out, &r));
  cx.set(out, std::move(r));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> einsum_entries() {
  return {{"Einsum", {lower_einsum, {"equation"}}}};
}

}  // namespace vitrt::convert::lowering
