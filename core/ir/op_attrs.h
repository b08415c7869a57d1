// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Typed options of each op, decoded from the model file's option union. Options are semantic (what the op
// computes), never implementation choices: kernels decide how.
#include <cstdint>
#include <variant>
#include <vector>

namespace vitrt {

// An activation applied to an op's result (an epilogue). Values match `Activation` in the schema.
// kSilu and kHardSwish are the Unary kinds of the same names (Conv2d epilogues: EfficientNet, MobileNetV3);
// kRelu6 is the Unary Clip to [0, 6] (MobileNetV2's ReLU6, exported as Clip).
enum class Activation : int8_t {
  kNone = 0,
  kRelu = 1,
  kGeluErf = 2,
  kGeluTanh = 3,
  kSilu = 4,
  kHardSwish = 5,
  kRelu6 = 6
};

// src [B,Cin,H,W], weight [Cout,Cin/groups,kh,kw], bias [Cout]?, residual [B,Cout,Ho,Wo]? -> [B,Cout,Ho,Wo]
// = act(conv(src) + bias + residual): unlike Linear's, the residual is added before the activation (ResNet's
// Add -> ReLU). The residual input is set by the planner's fuse_epilogue pass, never by the converter.
struct Conv2dAttrs {
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_h = 0, pad_w = 0;  // symmetric zero padding
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t groups = 1;
  Activation activation = Activation::kNone;
  // src [B,H,W,Cin] -> dst [B,Ho,Wo,Cout] (token sequences [B,H·W,C] seen as images; the weight keeps
  // PyTorch's layout). Set by the planner's channels_last_conv pass.
  bool channels_last = false;
};

struct BatchNorm2dAttrs {  // src [B,C,H,W], gamma, beta, running_mean, running_var (all [C])
  float eps = 1e-5f;
};

// src [..., K], weight [N,K] (PyTorch layout), bias [N]?, residual [..., N]? -> act(src·Wᵀ + bias) + residual
// (the residual input is set by the planner's fuse_epilogue pass, never by the converter)
struct LinearAttrs {
  Activation activation = Activation::kNone;
};

struct LayerNormAttrs {  // over the last axis; gamma, beta [C] optional
  float eps = 1e-5f;
};

enum class GeluApproximation : int8_t { kErf = 0, kTanh = 1 };
struct GeluAttrs {
  GeluApproximation approximation = GeluApproximation::kErf;
};

struct ConcatAttrs {  // inputs broadcast (numpy rules) on every axis but `axis`
  int32_t axis = 0;
};

// Python's x[start:end:step] along `axis` (ONNX Slice on one axis): negative start/end count from the end,
// then both are clamped (to [0, n] for a positive step, to [-1, n-1] for a negative one, which walks
// backwards from start down to end, exclusive). The result must not be empty. `step` is never 0; a step other
// than 1 needs op version 2 (older readers know only version 1 and would ignore the step; docs/format.md).
struct SliceAttrs {
  int32_t axis = 0;
  int64_t start = 0, end = 0;
  int64_t step = 1;
};

struct ReshapeAttrs {  // 0 copies the source dim at that position, -1 is inferred (at most one)
  std::vector<int64_t> shape;
};

struct TransposeAttrs {
  std::vector<int32_t> perm;
};

struct ReduceMeanAttrs {  // also ReduceSum and ReduceMax
  std::vector<int32_t> axes;
  bool keepdims = false;
};

// The reductions of the Reduce op (ONNX ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp). Mean, sum and max are ops of their own (ReduceMean, ReduceSum, ReduceMax)
// and have no kind here: one meaning, one encoding. Values match `ReduceKind` in the schema. Over an empty
// set (a reduced axis of size 0) each gives ONNX's identity: min +inf, prod 1, L1/L2/SumSquare 0,
// LogSum and LogSumExp -inf.
enum class ReduceKind : int8_t {
  kMin = 0,  // NaN wins, as torch.amin and numpy
  kProd = 1,
  kL1 = 2,         // sum |x|
  kL2 = 3,         // sqrt(sum x²)
  kSumSquare = 4,  // sum x²
  kLogSum = 5,     // log(sum x)
  kLogSumExp = 6,  // log(sum eˣ), computed as max + log(sum e^(x − max))
};
constexpr int kNumReduceKinds = 7;  // ReduceKind values are 0 .. kNumReduceKinds - 1
struct ReduceAttrs {
  ReduceKind kind = ReduceKind::kMin;
  std::vector<int32_t> axes;  // the reduced axes (none twice); the same shapes as ReduceMeanAttrs
  bool keepdims = false;
};

struct SoftmaxAttrs {
  int32_t axis = -1;
};

// How the projected Q, K and V reach a SoftmaxAttention op. Values match `AttentionInputs` in the schema.
enum class AttentionInputs : int8_t {
  kSeparate = 0,   // inputs q [B,Nq,C], k [B,Nk,C], v [B,Nk,C]
  kQkvPacked = 1,  // input qkv [B,N,3C]: columns [0,C) Q, [C,2C) K, [2C,3C) V (timm ViT)
  kQKvPacked = 2,  // inputs q [B,Nq,C], kv [B,Nk,2C]: columns [0,C) K, [C,2C) V (PVT)
};

// softmax(q·kᵀ·scale + bias + mask)·v per head, heads split head-major (c = head·d + j), merged back to
// [B,Nq,C]. After the layout's inputs an optional `score_bias` [B,h,Nq,Nk] is added to the scaled scores
// (LaViT's attention residual), or [1,h,Nq,Nk] broadcast over the batch (Swin's relative position bias); then
// an optional `score_mask` [nW,Nq,Nk], batch item b adding mask[b mod nW] to every head (Swin's
// shifted-window mask, its windows being the batch; B must be a multiple of nW). An optional second output
// receives the final pre-softmax scores [B,h,Nq,Nk] (LaViT's VA layers export them to the following LA
// layers). `scale_on_q` (op version 2): the scores are (q·scale)·kᵀ, each q element rounded after its
// scaling as PyTorch's `(q * scale) @ k.transpose(-2, -1)` does, instead of scale·(q·kᵀ).
// Cosine attention (Swin V2; op version 3, docs/onnx.md): with `qk_norm` every q and k row of a head is first
// divided by max(‖row‖₂, qk_norm_eps), as F.normalize(x, dim=-1) does; with `head_scales` (num_heads values)
// head h's scores are (q·kᵀ)·head_scales[h] instead of ·scale (Swin V2's exp(clamp(logit_scale))), which then
// must be 1 and takes no scale_on_q.
struct SoftmaxAttentionAttrs {
  int32_t num_heads = 1;
  float scale = 1.0f;
  AttentionInputs inputs = AttentionInputs::kSeparate;
  bool scale_on_q = false;
  bool qk_norm = false;
  float qk_norm_eps = 1e-12f;
  std::vector<float> head_scales = {};
};

// SOFT's softmax-free attention (docs/models.md §3.4-3.6). Values match the schema's enums.
enum class AttentionKernel : int8_t { kGaussian = 0 };  // exp(-|q - l|^2 / 2)
enum class LandmarkSource : int8_t {
  kStridedConvLnGelu = 0
};  // conv r x r stride r shared by heads, LN(d), GELU
enum class PseudoInverse : int8_t {
  kNewtonScaled = 0,  // current SOFT: alpha per (b,h) = 0.9*2/max_rowsum^2, then P = K2 + reg*I, V0 = alpha*P
  kNewtonLegacy =
      1,  // SOFT-Norm / pre-2022-07: alpha global over the batch with backtracking, no regulariser
};
// inputs: q [B,N,C] (the W_q projection, not yet scaled), v [B,N,C], landmark_weight [d,d,r,r],
//         landmark_ln_gamma [d], landmark_ln_beta [d], v_conv_weight [h,1,k,k]  ->  [B,N,C]
struct LinearAttentionAttrs {
  int32_t num_heads = 1;
  int32_t height = 1, width = 1;  // the token grid, N = height * width
  float q_scale = 1.0f;           // Q is multiplied by this first (SOFT: d^-1/4); K is tied to Q
  AttentionKernel kernel = AttentionKernel::kGaussian;
  LandmarkSource landmarks = LandmarkSource::kStridedConvLnGelu;
  int32_t landmark_ratio = 1;  // r: landmark conv kernel and stride
  float landmark_ln_eps = 1e-5f;
  PseudoInverse pinv = PseudoInverse::kNewtonScaled;
  int32_t newton_iterations = 20;
  float newton_regularizer = 0.01f;      // kNewtonScaled: added to the diagonal after alpha is computed
  bool symmetric_normalization = false;  // SOFT-Norm: inv <- D^-1/2 inv D^-1/2, D = row sums of K2
};

// LaViT's Less-Attention layer (docs/models.md §4.2): scores from the previous layer through Θ on the key
// axis and Ψ on the query axis, softmax, ·V. inputs: prev_scores [B,h,N,N'], v [B,N',C], theta_weight
// [N',N'], theta_bias [N'], psi_weight [N,N],
//         psi_bias [N]  ->  out [B,N,C] and, optionally, the new scores [B,h,N,N'].
struct ReusedAttentionAttrs {
  int32_t num_heads = 1;
};

// LaViT's attention residual between stages: the last scores of stage s-1 [B,h1,N1,N'] viewed as one
// h1-channel image over the query grid per key, a depthwise conv (kernel = stride = k), a 1x1 conv over heads
// and a per-head scale. inputs: scores [B,h1,N1,N'], dw_weight [h1,1,k,k], dw_bias [h1], pw_weight
// [h2,h1,1,1], pw_bias [h2],
//         gamma [h2]  ->  [B,h2,N2,N'] with N2 = floor(H1/k)*floor(W1/k).
struct AttentionResidualAttrs {
  int32_t height = 1, width = 1;  // the query grid of the source scores, N1 = height * width
};

// The PVT v2 / LaViT MLP as one op, made by the planner's fuse_conv_mlp pass from fc1 -> channels-last
// depthwise conv -> fc2 (never by the converter), so a backend can run it a band of image rows at a time:
//   hidden = act1(src·W1ᵀ + b1) viewed as [B,H,W,Ch]; mid = act2(dwconv(hidden) + bdw) (stride 1, zero
//   padding pad_h/pad_w, kernel [kh,kw] = [2·pad_h+1, 2·pad_w+1], so the grid keeps its size); dst =
//   act3(mid·W2ᵀ + b2)
//   + residual.
// inputs: src [B,N,C] (N = height·width), fc1_weight [Ch,C], fc1_bias [Ch]?, dw_weight [Ch,1,kh,kw],
//         dw_bias [Ch]?, fc2_weight [Co,Ch], fc2_bias [Co]?, residual [B,N,Co]?  ->  [B,N,Co]
struct ConvMlpAttrs {
  int32_t height = 1, width = 1;
  int32_t pad_h = 1, pad_w = 1;
  Activation fc1_activation = Activation::kNone;
  Activation dw_activation = Activation::kNone;
  Activation fc2_activation = Activation::kNone;
};

struct AdaptiveAvgPool2dAttrs {  // src [B,C,H,W] -> [B,C,out_h,out_w], PyTorch's adaptive bin edges
  int32_t out_h = 1, out_w = 1;
};

// The functions of the Unary op, elementwise in float32 as ONNX and PyTorch define them. Values match
// `UnaryKind` in the schema. `alpha` and `beta` are the parameters of the kinds that have them and 0 for the
// others (ops/unary_attrs.h states and checks the rules; formats and kernels refuse anything else).
enum class UnaryKind : int8_t {
  kSqrt = 0,
  kErf = 1,
  kTanh = 2,
  kSigmoid = 3,  // 1 / (1 + e^-x)
  kAbs = 4,
  kNeg = 5,
  kLog = 6,
  kReciprocal = 7,
  kFloor = 8,
  kCeil = 9,
  kLeakyRelu = 10,    // x < 0 ? alpha·x : x
  kElu = 11,          // x < 0 ? alpha·(e^x - 1) : x
  kHardSigmoid = 12,  // clamp(alpha·x + beta, 0, 1)
  kHardSwish = 13,    // x·clamp(x/6 + 1/2, 0, 1)
  kSoftplus = 14,     // log(1 + e^x)
  kSilu = 15,         // x·sigmoid(x)
  kClip = 16,         // clamp(x, alpha, beta): min(max(x, alpha), beta), NaN stays NaN; bounds may be ±inf
  kSin = 17,
  kCos = 18,
  kRound = 19,  // to the nearest integer, halves to even (ONNX Round, numpy.round, torch.round)
  kSign = 20,   // -1, 0 or 1 (±0 gives 0, NaN stays NaN, as ONNX's numpy.sign)
  kMish = 21,   // x·tanh(softplus(x)) (-inf gives NaN, as torch and ONNX's reference)
  // Appended later (docs/format.md, Op codes). NaN stays NaN in every one but Shrink, as ONNX's reference.
  kSelu = 22,             // x > 0 ? beta·x : beta·alpha·(e^x - 1) (ONNX's gamma is beta)
  kCelu = 23,             // x > 0 ? x : alpha·(e^(x/alpha) - 1), alpha not 0
  kThresholdedRelu = 24,  // x > alpha ? x : 0
  kSoftsign = 25,         // x / (1 + |x|) (±inf gives NaN, as the formula)
  kShrink = 26,  // x < -alpha ? x + beta : x > alpha ? x - beta : 0 (ONNX's lambd, bias; NaN gives 0)
  kTan = 27,
  kAsin = 28,
  kAcos = 29,
  kAtan = 30,
  kSinh = 31,
  kCosh = 32,
  kAsinh = 33,
  kAcosh = 34,
  kAtanh = 35,
};
struct UnaryAttrs {
  UnaryKind kind = UnaryKind::kSqrt;
  float alpha = 0.0f, beta = 0.0f;
};

// Windowed max or average over H and W (ONNX MaxPool / AveragePool, PyTorch max_pool2d / avg_pool2d;
// docs/onnx.md): src [B,C,H,W] -> [B,C,Ho,Wo]. Window (i, j) covers rows i·stride_h − pad_top + k·dilation_h,
// k < kernel_h, and likewise columns. Padding is asymmetric (ONNX pads and SAME auto_pad). Along each axis
// out = floor((in + pad_begin + pad_end − ((kernel − 1)·dilation + 1)) / stride) + 1, rounded up instead with
// ceil_mode, dropping a last window that would start past the input and its leading padding (as PyTorch and
// ONNX do). Max: padded positions never win (a NaN does). Average: no dilation; the divisor is the number of
// input positions in the window, or with count_include_pad its size clipped to the padded input (the
// ceil_mode overhang is never counted).
enum class PoolKind : int8_t { kMax = 0, kAverage = 1 };
struct Pool2dAttrs {
  PoolKind kind = PoolKind::kMax;
  int32_t kernel_h = 1, kernel_w = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int32_t dilation_h = 1, dilation_w = 1;
  bool ceil_mode = false;
  bool count_include_pad = false;
};

// ONNX InstanceNormalization: src [B,C,D1,...] (rank >= 3), scale [C], bias [C] -> the same shape. Each
// (b, c) plane is normalised over its spatial elements with the biased variance:
// y = scale[c]·(x − mean)/sqrt(var + eps) + bias[c].
struct InstanceNormAttrs {
  float eps = 1e-5f;  // finite, >= 0
};

// Elementwise comparison with numpy broadcasting: dst = 1 where `a kind b` holds, else 0. vitrt computes in
// float32, so ONNX booleans are float 0 and 1 (docs/onnx.md). IEEE rules: a NaN operand compares false,
// except for kNotEqual (true). Values match `CompareKind` in the schema.
enum class CompareKind : int8_t {
  kEqual = 0,
  kLess = 1,
  kGreater = 2,
  kLessOrEqual = 3,
  kGreaterOrEqual = 4,
  kNotEqual = 5,
};
constexpr int kNumCompareKinds = 6;
struct CompareAttrs {
  CompareKind kind = CompareKind::kEqual;
};

// Where (no attributes): dst = cond != 0 ? a : b, inputs cond, a, b broadcast together (numpy rules). A NaN
// condition is non-zero and picks a.

// Pad (ONNX Pad): `pads` holds the leading pads of every axis, then the trailing ones (ONNX's order, 2·rank
// values, each >= 0). kConstant fills with `value`; kReflect mirrors without repeating the edge (each pad
// smaller than its axis, as PyTorch's reflect); kEdge repeats the edge value. Values match `PadMode` in the
// schema.
enum class PadMode : int8_t { kConstant = 0, kReflect = 1, kEdge = 2 };
struct PadAttrs {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> pads;
  float value = 0.0f;
};

// Expand (ONNX Expand): src broadcast to `shape` with numpy rules in both directions, so a 1 in `shape`
// keeps the source's dimension (the batch stays dynamic that way); every entry >= 1. ONNX Tile lowers onto it
// (docs/onnx.md).
struct ExpandAttrs {
  std::vector<int64_t> shape;
};

// Squeeze-and-excitation (SENet; the SE blocks of SE-ResNet, MobileNetV3, EfficientNet) as one op, made by
// the planner's fuse_squeeze_excite pass from global average pooling -> 1x1 conv / Linear -> act -> 1x1 conv
// / Linear -> gate -> Mul (docs/architecture.md §5). Per image b:
//   s[c] = mean of x[b,c,:,:] (summed in double, as AdaptiveAvgPool2d);  h = act(W1·s + b1);
//   g = gate(W2·h + b2);  dst[b,c,:,:] = x[b,c,:,:]·g[c]
// inputs: src [B,C,H,W], fc1_weight [Cr,C] or [Cr,C,1,1], fc1_bias [Cr]?, fc2_weight [C,Cr] or [C,Cr,1,1],
//         fc2_bias [C]?  ->  [B,C,H,W]
// Values match `SqueezeActivation` and `ExciteGate` in the schema.
enum class SqueezeActivation : int8_t { kRelu = 0, kSilu = 1 };  // silu: x·sigmoid(x)
enum class ExciteGate : int8_t {
  kSigmoid = 0,      // 1 / (1 + e^-x)
  kHardSigmoid = 1,  // clamp(gate_alpha·x + gate_beta, 0, 1) (Unary's HardSigmoid)
};
struct SqueezeExciteAttrs {
  SqueezeActivation activation = SqueezeActivation::kRelu;
  ExciteGate gate = ExciteGate::kSigmoid;
  float gate_alpha = 0.0f, gate_beta = 0.0f;  // kHardSigmoid's, both finite; 0 for kSigmoid
};

// Transposed convolution (ONNX ConvTranspose, PyTorch conv_transpose2d; docs/onnx.md): src [B,Cin,H,W],
// weight [Cin, Cout/groups, kh, kw] (ONNX's and PyTorch's layout), bias [Cout]? -> [B,Cout,Ho,Wo]. Each input
// pixel (iy, ix) of channel ci in group g scatters x·W[ci, co - g·Cout/groups, ky, kx] onto output row
// oy = iy·stride_h − pad_top + ky·dilation_h and column ox = ix·stride_w − pad_left + kx·dilation_w; taps
// outside the output are dropped. Along each axis out = (in − 1)·stride − pad_begin − pad_end +
// (kernel − 1)·dilation + 1 + output_padding (output_padding adds rows/columns at the end, reached by taps
// only where the pads crop). Pads and output_padding are >= 0; ONNX's auto_pad and output_shape are resolved
// into them at import.
struct ConvTransposeAttrs {
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t output_padding_h = 0, output_padding_w = 0;
  int32_t groups = 1;
};

// The index of the largest (kMax) or smallest (kMin) element along `axis` (ONNX ArgMax / ArgMin), written
// as a float32 value (exact: shape inference refuses an axis longer than 2^24). The axis is dropped, or kept
// as 1 with keepdims. Ties go to the first index, or the last with select_last_index. A NaN wins over every
// number (numpy.argmax / argmin, which ONNX's reference uses): the first NaN, or the last with
// select_last_index. Values match `ArgKind` in the schema.
enum class ArgKind : int8_t { kMax = 0, kMin = 1 };
struct ArgMaxAttrs {
  ArgKind kind = ArgKind::kMax;
  int32_t axis = 0;  // negative counts from the end
  bool keepdims = true;
  bool select_last_index = false;
};

// Trilu (ONNX Trilu): the upper (or lower) triangle of every matrix formed by the last two axes, every other
// element zero. Element (i, j) of a matrix is kept when j − i >= k (upper) or j − i <= k (lower); k > 0 moves
// the diagonal up, k < 0 down. Batch axes in front are any. k is ONNX's constant input, resolved at import.
struct TriluAttrs {
  bool upper = true;
  int64_t k = 0;
};

// CumSum (ONNX CumSum): running sums along `axis` (negative counts from the end), taken in float32 in the
// axis' order, or from its end with `reverse`: numpy.cumsum in float32, which ONNX's reference uses (one
// rounding per step, in order). `exclusive` writes each sum before adding the element (the first is 0).
struct CumSumAttrs {
  int32_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
};

// LRN (ONNX LRN, local response normalisation across channels; AlexNet, GoogLeNet, CaffeNet): for input
// [N,C,D1..] (rank 3 to 8), y = x / (bias + alpha/size · Σ x²)^beta, the sum over the channels
// c - floor((size-1)/2) .. c + ceil((size-1)/2) that exist, at the same position. In float32: the squares
// summed in channel order, alpha/size rounded once, as ONNX's numpy reference. size ≥ 1; alpha, beta, bias
// finite.
struct LrnAttrs {
  int32_t size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

// GatherElements (ONNX GatherElements): out[i0..ir-1] = data[i0.., indices[i0..ir-1], ..ir-1], the index in
// place of coordinate `axis`. Input 1 holds the indices as float32 values: integers in [0, data's axis
// length), which is at most 2^24 so they are exact (the importer wraps ONNX's negative indices and takes
// only constant ones). The indices have data's rank and are no larger than data on the other axes; the
// output has their shape.
struct GatherElementsAttrs {
  int32_t axis = 0;  // negative counts from the end
};

// TopK (ONNX TopK): the k largest (or smallest) elements along `axis` and their indices, in two outputs of
// the input's shape with the axis k long. Both are sorted: largest first (smallest first), equal values lower
// index first (ONNX's rule), a NaN above every number (numpy.sort's place for it). The indices are float32
// values, exact as the axis holds at most 2^24 elements (as ArgMax's). ONNX's sorted=0 leaves the order
// open; vitrt sorts anyway.
struct TopKAttrs {
  int32_t axis = -1;  // negative counts from the end
  int64_t k = 1;      // 1 <= k <= the axis' length
  bool largest = true;
};

// Resize (ONNX Resize, PyTorch F.interpolate; docs/onnx.md): the last `sizes.size()` axes (1 to 3) of src
// become `sizes`; the leading axes are kept. Along a resized axis of input length n, output position o reads
// the source coordinate x(o), computed in double from the float `step` (input positions per output
// position, as PyTorch's float `scale`):
//   kHalfPixel  step·(o + 0.5) − 0.5      kPytorchHalfPixel  the same, 0 where the axis becomes length 1
//   kAlignCorners, kAsymmetric  step·o    kTfHalfPixelForNn  step·(o + 0.5)
// kNearest with kAsymmetric and kFloor (PyTorch's 'nearest') takes floor(float(step·o)), as PyTorch; the
// other nearest forms compute x as ONNX's reference does, dividing by `scales` in double (step·(o + 0.5)
// becomes (o + 0.5)/scale; align_corners o·(n − 1)/(n·scale − 1)), so that its exact ties round as
// `nearest` says; the index is clamped to [0, n − 1].
// kLinear blends the two inputs around max(x, 0); kCubic the four around x with Keys' cubic of parameter
// `cubic_a` (indices clamped to the edge, or with exclude_outside the outside taps dropped and the rest
// renormalised). Each axis's taps and float weights, and the fused multiply-adds that blend them (outer
// axes over inner ones), follow PyTorch's CPU kernels bit for bit (backends/cpu/ref/resize_taps.h). An axis
// whose length and coordinates do not change (n = out, and n = 1 or step 1 and not kTfHalfPixelForNn) is
// copied.
// Values match `ResizeMode`, `ResizeCoordinate` and `ResizeNearest` in the schema.
enum class ResizeMode : int8_t { kNearest = 0, kLinear = 1, kCubic = 2 };
enum class ResizeCoordinate : int8_t {
  kHalfPixel = 0,
  kPytorchHalfPixel = 1,
  kAlignCorners = 2,
  kAsymmetric = 3,
  kTfHalfPixelForNn = 4,
};
enum class ResizeNearest : int8_t { kRoundPreferFloor = 0, kRoundPreferCeil = 1, kFloor = 2, kCeil = 3 };
constexpr int kNumResizeModes = 3, kNumResizeCoordinates = 5, kNumResizeNearest = 4;
constexpr int kMaxResizeAxes = 3;
struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoordinate coordinate = ResizeCoordinate::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  float cubic_a = -0.75f;  // finite
  bool exclude_outside = false;
  std::vector<int64_t> sizes;  // the output lengths of the last sizes.size() axes, each >= 1
  std::vector<float> steps;    // one per resized axis, finite and >= 0
  std::vector<double> scales;  // one per resized axis, finite and > 0: ONNX's scale (out/n, or as given)
};

// External Attention (EANet, docs/linear_attention.md "External Attention"): per batch item and head h of
// width dh = C/heads (head-major channels), with x_h [N,dh] the head's tokens,
//   L = x_h·W0ᵀ + b0 [N,S];  A = softmax of L over the N TOKENS (each memory slot's column);
//   A'[n,s] = A[n,s] / (eps + Σ_s A[n,s]);  dst_h = A'·W1ᵀ + b1 [N,dh]
// inputs: src [B,N,C], w0 [S,dh] (linear_0 / M_k), b0 [S]?, w1 [dh,S] (linear_1 / M_v), b1 [dh]?  ->  [B,N,C]
// EAMLP's multi-head Attention has biases and eps 1e-9; xmu-xiaoma666's ExternalAttention one head, no
// biases and eps 0 (a plain division by the slot sum).
struct ExternalAttentionAttrs {
  int32_t num_heads = 1;  // >= 1, divides C
  float eps = 1e-9f;      // finite, >= 0
};

// PerformerAttention (Performer / FAVOR+, lucidrains performer-pytorch; docs/linear_attention.md, Performer):
// q [B,Nq,C], k and v [B,Nk,C] (projected tokens, head-major channels, d = C/heads) and the stored random
// features projection [m,d] -> [B,Nq,C]. Per (b,h), with dn = d^-1/4 and ratio = m^-1/2:
//   kSoftmax      u = (dn·x)·Wᵀ, g = dn²/2·‖x‖², φ(x) = ratio·(exp(u − g − max) + 1e-4), the max per query
//                 row over features, for keys per `key_max` (over the item's tokens and features, or over the
//                 whole batch: older versions, which couples the images of a batch);
//   kGeneralized  φ(x) = relu((dn·x)·Wᵀ) + 1e-3;
// then out = (φ(q)·(φ(k)ᵀ·v)) / (φ(q)·Σ_n φ(k)) without an epsilon.
// Values match `PerformerKernel` and `PerformerKeyMax` in the schema.
enum class PerformerKernel : int8_t { kSoftmax = 0, kGeneralized = 1 };
enum class PerformerKeyMax : int8_t { kPerHead = 0, kGlobal = 1 };
constexpr int kNumPerformerKernels = 2, kNumPerformerKeyMax = 2;
struct PerformerAttentionAttrs {
  int32_t heads = 1;  // >= 1, divides C
  PerformerKernel kernel = PerformerKernel::kSoftmax;
  PerformerKeyMax key_max = PerformerKeyMax::kPerHead;  // 0 (unused) with kGeneralized: one encoding
};

// Nyströmformer attention (mlpen/Nystromformer; docs/linear_attention.md, Nyströmformer). Per (batch, head),
// with Q = q·q_scale, K = k·k_scale split head-major into [N,d] and m landmark segments:
//   Q̃, K̃ = segment means of Q, K (the first (⌊N/m⌋+1)·m − N segments hold ⌊N/m⌋ tokens, the rest one more)
//   k1 = softmax(Q K̃ᵀ) [N,m];  k2 = softmax(Q̃ K̃ᵀ) [m,m];  k3 = softmax(Q̃ Kᵀ) [m,N]   (row softmax)
//   Z0 = k2ᵀ / max_j Σ_i k2[i,j]; `iterations` × { KV = k2·Z; Z = (Z/4)(13I − KV(15I − KV(7I − KV))) }
//   out = (k1·Z)·(k3·V) (+ the per-head depthwise conv of V along tokens)
// inputs: q, k, v [B,N,C], v_conv_weight [h,1,ks,1] (ks odd, optional)  ->  [B,N,C]
// Values match `NystromInit` in the schema.
enum class NystromInit : int8_t {
  kGlobal = 0,   // "original": the max column sum over the whole batch and all heads (couples the images)
  kPerHead = 1,  // per (batch, head)
};
struct NystromAttentionAttrs {
  int32_t num_heads = 1;
  int32_t landmarks = 1;  // m, 1 <= m <= N
  float q_scale = 1.0f, k_scale = 1.0f;
  NystromInit init = NystromInit::kGlobal;
  int32_t iterations = 6;
};

// Selective Kernel (SKNet, docs/linear_attention.md "SE and SK"): the select-and-fuse part of an SK block,
// made by the planner's fuse_selective_kernel pass; the M branch convolutions stay Conv2d ops. Per image:
//   U = Σ_i x_i;  s = mean of U over H, W;  z = act(scale ⊙ (W_r·s + b_r) + shift);
//   l = W_s·z + b_s [M·C];  a_i[c] = softmax over i of l[i·C + c];  dst = Σ_i a_i[c]·x_i[c,:,:]
// inputs: x_0 .. x_{M-1} [B,C,H,W]; then fc_reduce_weight [d,C] or [d,C,1,1], fc_reduce_bias [d]?,
//         z_scale [d]?, z_shift [d]? (a folded BatchNorm on z: both or neither), fc_select_weight [M·C,d] or
//         [M·C,d,1,1] (branch i's rows i·C .. i·C+C-1, the order timm's fc_select and a concatenation of
//         per-branch layers both give), fc_select_bias [M·C]?  ->  [B,C,H,W]
// Values match `SelectiveKernelActivation` in the schema.
enum class SelectiveKernelActivation : int8_t { kNone = 0, kRelu = 1 };
constexpr int kNumSelectiveKernelActivations = 2;
constexpr int32_t kMaxSelectiveKernelBranches = 16;
struct SelectiveKernelAttrs {
  int32_t branches = 2;  // M, 1 .. kMaxSelectiveKernelBranches
  SelectiveKernelActivation z_activation = SelectiveKernelActivation::kRelu;
};

// ScatterND (ONNX ScatterND): out = data, then for each index tuple t (in order) the slice
// out[indices[t, 0], …, indices[t, k-1], …] combined with updates[t, …]: replaced (kNone), or added,
// multiplied, or its max / min taken elementwise. Input 1 holds the tuples as float32 values [..., k]: each
// an integer in [0, data's dim), exact as shape inference refuses a dim over 2^24 among the first k (the
// importer wraps ONNX's negative indices and takes only constant ones). updates has the indices' shape
// without its last axis, then data's shape from axis k on. Values match `ScatterReduction` in the schema.
enum class ScatterReduction : int8_t { kNone = 0, kAdd = 1, kMul = 2, kMax = 3, kMin = 4 };
constexpr int kNumScatterReductions = 5;
struct ScatterNDAttrs {
  ScatterReduction reduction = ScatterReduction::kNone;
};

// Fastformer's additive attention (wuch15/Fastformer; docs/linear_attention.md, Fastformer). Per batch
// item, with heads h of width d = C/h (channel c belongs to head c/d):
//   α[h][n] = softmax_n(scale·(query_att_w[h]·q[n] + query_att_b[h]))      p[c] = Σ_n α[c/d][n]·q[n][c]
//   β[h][n] = softmax_n(scale·(key_att_w[h]·(k[n]∘p) + key_att_b[h]))      g[c] = Σ_n β[c/d][n]·k[n][c]·p[c]
//   dst[n][c] = g[c]·q[n][c]
// inputs: q [B,N,C], k [B,N,C], query_att_w [h,C], query_att_b [h], key_att_w [h,C], key_att_b [h] -> [B,N,C]
struct FastformerAttentionAttrs {
  int32_t heads = 1;   // >= 1, divides C
  float scale = 1.0f;  // finite and > 0; the official module's 1/sqrt(d)
};

// Kernelized (linear) attention, the core of the linear-attention family's kernel-feature forms
// (docs/linear_attention.md, "KernelizedAttention"): per image and head, out = φq(Q)·(φk(K)ᵀ·V), computed
// as a [dk,dv] context so that no N×N matrix exists. q, k [B,N,h·dk], v [B,N,h·dv] (head-major channels,
// the projected tokens) -> [B,N,h·dv]. The kinds (values match `KernelizedKind` in the schema):
//   kEluNormalized (Linear Transformer, idiap/fast-transformers): φ = elu(x) + 1 on q and k,
//     out[l] = φ(Q_l)·(Σ_s φ(K_s) V_sᵀ) / (φ(Q_l)·Σ_s φ(K_s) + eps);
//   kEluScaled (the unnormalised form of mlpen's LRA attention_linear.py): φ = (elu(x) + 1)/scale on q and
//     k, out = φ(Q)·(φ(K)ᵀ V); `scale` is the graph's constant (N^{1/4} of the training length there);
//   kSoftmaxPair (Efficient Attention; Performer's no_projection): φq = softmax of each query token over the
//     head's dk channels, φk = softmax of each key channel over the N positions; no normaliser.
enum class KernelizedKind : int8_t { kEluNormalized = 0, kEluScaled = 1, kSoftmaxPair = 2 };
struct KernelizedAttentionAttrs {
  KernelizedKind kind = KernelizedKind::kEluNormalized;
  int32_t num_heads = 1;  // >= 1, dividing both channel counts
  float eps = 1e-6f;      // kEluNormalized's, finite and >= 0; 0 for the other kinds
  float scale = 1.0f;     // kEluScaled's, finite and > 0; 1 for the other kinds
};

struct NoAttrs {};

using OpAttrs = std::variant<
    NoAttrs, Conv2dAttrs, BatchNorm2dAttrs, LinearAttrs, LayerNormAttrs, GeluAttrs, ConcatAttrs, SliceAttrs,
    ReshapeAttrs, TransposeAttrs, ReduceMeanAttrs, SoftmaxAttrs, SoftmaxAttentionAttrs,
    AdaptiveAvgPool2dAttrs, LinearAttentionAttrs, ReusedAttentionAttrs, AttentionResidualAttrs, ConvMlpAttrs,
    UnaryAttrs, Pool2dAttrs, ReduceAttrs, InstanceNormAttrs, CompareAttrs, PadAttrs, ExpandAttrs,
    SqueezeExciteAttrs, ConvTransposeAttrs, ArgMaxAttrs, TriluAttrs, CumSumAttrs, GatherElementsAttrs,
    TopKAttrs, ResizeAttrs, ExternalAttentionAttrs, PerformerAttentionAttrs, NystromAttentionAttrs,
    SelectiveKernelAttrs, ScatterNDAttrs, FastformerAttentionAttrs, KernelizedAttentionAttrs, LrnAttrs>;

}  // namespace vitrt
