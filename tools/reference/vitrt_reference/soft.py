"""SOFT / SOFT-Norm reference (docs/models.md §3): fudan-zvg/SOFT `SoftmaxFreeVisionTransformer` (models/
softmax_free_vision_transformer.py + models/softmax_free_transformer.py), written from the spec, module by module.
State_dict key names, shapes and order match the official dump (soft_tiny_state_dict.txt).

Conventions kept exactly (docs/models.md §3.3-3.7):
  - stage 1-3 blocks are post-norm (LN eps 1e-5), FFN hidden 4C with the tanh GELU (`Approx_GeLU`);
  - Q = W_q(x) / sqrt(sqrt(d)), K tied to Q; landmarks = Conv2d(d,d,r,stride r, no bias) shared by the heads, then
    LayerNorm(d) + erf GELU; Gaussian kernel exp(-sum_c (q-l)^2 / 2) summed directly over c (the CUDA form);
  - X = (K1 @ K2inv) @ (K1^T @ V) + depthwise conv of V (one k x k kernel per head, k = 9/5/3);
  - K2inv: `newton_inv_scaled` (current master) for SOFT, `newton_inv_legacy` + D^-1/2 scaling for SOFT-Norm;
  - stage 4 is a pre-norm PVT block (LN 1e-6, erf GELU, softmax attention) on [cls | 7x7 tokens];
  - pos embeds are stored for 224 and resized bilinearly (align_corners=False) when the grid differs.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

HEAD_DIM = 32
V_CONV_KERNELS = (9, 5, 3)


# ----------------------------------------------------------------------------------------------------------
# Newton-Raphson pseudo-inverses (§3.5)
# ----------------------------------------------------------------------------------------------------------
def newton_inv_scaled(mat, iters=20, reg=0.01):
    """Current master `SOFT/kernel/inverse.py::newton_inv` (§3.5a). mat [..., m, m].
    alpha per matrix from the UN-regularised row sums, then P = mat + reg*I, V0 = alpha*P, V <- 2V - (V@P)@V."""
    I = torch.eye(mat.size(-1), dtype=mat.dtype, device=mat.device)
    alpha = 0.9 * 2 / (torch.max(torch.sum(mat, dim=-1), dim=-1)[0] ** 2)
    P = mat + reg * I
    V = alpha[..., None, None] * P
    for _ in range(iters):
        V = 2 * V - V @ P @ V
    return V


def newton_inv_legacy(mat, iters=20, info=None):
    """Legacy `newton_inv` (before bb0eec0, still the SOFT-Norm class method; §3.5b). ONE alpha for the whole tensor
    (all batch elements and heads), halved while the max column-abs-sum of I - P@V exceeds 1.01 (at most 10 times),
    no regulariser. If `info` is a dict it receives the final alpha and the number of halvings."""
    P = mat
    I = torch.eye(mat.size(-1), dtype=mat.dtype, device=mat.device)
    alpha = 2 / (torch.max(torch.sum(mat, dim=-1)) ** 2)
    beta = 0.5
    V = alpha * P
    pnorm = torch.max(torch.sum(torch.abs(I - torch.matmul(P, V)), dim=-2))
    err_cnt = 0
    while pnorm > 1.01 and err_cnt < 10:
        alpha *= beta
        V = alpha * P
        pnorm = torch.max(torch.sum(torch.abs(I - torch.matmul(P, V)), dim=-2))
        err_cnt += 1
    if info is not None:
        info.update(alpha=float(alpha), backtracks=err_cnt)
    for _ in range(iters):
        V = 2 * V - V @ P @ V
    return V


def gaussian_sq_dist(q, l):
    """sum_c (q[...,i,c] - l[...,j,c])^2, accumulated over c in order (the CUDA kernel's direct form).
    q [..., N, d], l [..., m, d] -> [..., N, m]."""
    out = None
    for c in range(q.shape[-1]):
        t = q[..., :, c, None] - l[..., None, :, c]
        t = t * t
        out = t if out is None else out + t
    return out


class ApproxGELU(nn.Module):
    """SOFT's `Approx_GeLU`: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))


# ----------------------------------------------------------------------------------------------------------
# SOFT block (stages 1-3), §3.4 / §3.6
# ----------------------------------------------------------------------------------------------------------
class SoftmaxFreeAttentionKernel(nn.Module):
    def __init__(self, dim, num_heads, ratio, conv_size, max_iter=20):
        super().__init__()
        assert ratio > 1, "the ratio == 1 branch is not ported (docs/models.md §3.1)"
        self.head_dim = dim // num_heads
        self.num_head = num_heads
        self.ratio = ratio
        self.max_iter = max_iter
        self.Qlandmark_op = nn.Conv2d(self.head_dim, self.head_dim, kernel_size=ratio, stride=ratio, bias=False)
        self.Qnorm_act = nn.Sequential(nn.LayerNorm(self.head_dim), nn.GELU())
        self.conv = nn.Conv2d(self.num_head, self.num_head, kernel_size=(conv_size, conv_size),
                              padding=(conv_size // 2, conv_size // 2), bias=False, groups=self.num_head)

    def pinv(self, K2):
        return newton_inv_scaled(K2, self.max_iter)

    def forward(self, Q, V, H, W):
        b, nhead, N, headdim = Q.size()
        Q = Q / math.sqrt(math.sqrt(self.head_dim))
        # K is tied to Q (no key projection): the landmarks below are computed from the scaled Q
        # landmarks: strided conv shared by heads (heads folded into the batch), LN(d), erf GELU
        Q_landmarks = Q.clone().reshape(b * nhead, H * W, headdim).reshape(b * nhead, H, W, headdim).permute(0, 3, 1, 2)
        Q_landmarks = self.Qlandmark_op(Q_landmarks)
        Q_landmarks = Q_landmarks.flatten(2).transpose(1, 2).reshape(b, nhead, -1, headdim)
        Q_landmarks = self.Qnorm_act(Q_landmarks)
        K_landmarks = Q_landmarks
        kernel_1_ = torch.exp(-gaussian_sq_dist(Q, K_landmarks) / 2)                # [b,h,N,m]
        kernel_2_ = torch.exp(-gaussian_sq_dist(Q_landmarks, K_landmarks) / 2)      # [b,h,m,m]
        kernel_2_inv = self.pinv(kernel_2_)
        kernel_3_ = kernel_1_.transpose(-1, -2)
        X = torch.matmul(torch.matmul(kernel_1_, kernel_2_inv), torch.matmul(kernel_3_, V))
        # depthwise conv on V: one k x k kernel per head, shared by its d channels
        Vc = V.reshape(b, nhead, H, W, headdim).permute(0, 4, 1, 2, 3).reshape(b * headdim, nhead, H, W)
        Vc = self.conv(Vc).reshape(b, headdim, nhead, H, W).flatten(3).permute(0, 2, 3, 1)
        X = X + Vc
        return X


class SoftmaxFreeNormAttentionKernel(SoftmaxFreeAttentionKernel):
    """SOFT-Norm (§3.6): legacy Newton on K2, then inv <- D^-1/2 inv D^-1/2 with D = row sums of K2."""

    def pinv(self, K2):
        Dm = 1.0 / torch.sqrt(K2.sum(-1, keepdim=True))
        inv = newton_inv_legacy(K2, self.max_iter)
        return Dm * inv * Dm.transpose(-1, -2)


class SoftmaxFreeAttention(nn.Module):
    def __init__(self, dim, num_heads, ratio, conv_size, max_iter=20, norm=False):
        super().__init__()
        self.dim = dim
        self.head_dim = dim // num_heads
        self.num_head = num_heads
        self.W_q = nn.Linear(dim, dim)
        self.W_v = nn.Linear(dim, dim)
        kern = SoftmaxFreeNormAttentionKernel if norm else SoftmaxFreeAttentionKernel
        self.attn = kern(dim, num_heads, ratio, conv_size, max_iter)
        self.ff = nn.Linear(dim, dim)

    def split_heads(self, X):
        return X.reshape(X.size(0), X.size(1), self.num_head, self.head_dim).transpose(1, 2)

    def combine_heads(self, X):
        return X.transpose(1, 2).reshape(X.size(0), X.size(2), self.num_head * self.head_dim)

    def forward(self, X, H, W):
        Q = self.split_heads(self.W_q(X))
        V = self.split_heads(self.W_v(X))
        return self.ff(self.combine_heads(self.attn(Q, V, H, W)))


class SoftmaxFreeTransformer(nn.Module):
    """Post-norm: Y = LN1(X + mha(X)); out = LN2(Y + ff2(tanhGELU(ff1(Y))))."""

    def __init__(self, dim, num_heads, ratio, conv_size, max_iter=20, norm=False):
        super().__init__()
        hidden = 4 * dim
        self.mha = SoftmaxFreeAttention(dim, num_heads, ratio, conv_size, max_iter, norm)
        self.norm1 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, hidden)
        self.act = ApproxGELU()
        self.ff2 = nn.Linear(hidden, dim)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, X, H, W):
        X = self.norm1(X + self.mha(X, H, W))
        X = self.norm2(X + self.ff2(self.act(self.ff1(X))))
        return X


class SoftmaxFreeTransformerBlock(nn.Module):
    def __init__(self, dim, num_heads, ratio, conv_size, max_iter=20, norm=False):
        super().__init__()
        self.att = SoftmaxFreeTransformer(dim, num_heads, ratio, conv_size, max_iter, norm)

    def forward(self, x, H, W):
        return self.att(x, H, W)


# ----------------------------------------------------------------------------------------------------------
# Stage 4: PVT Block with sr_ratio 1 (§3.7)
# ----------------------------------------------------------------------------------------------------------
class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, dim, num_heads, qkv_bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        h = self.num_heads
        q = self.q(x).reshape(B, N, h, C // h).permute(0, 2, 1, 3)
        kv = self.kv(x).reshape(B, -1, 2, h, C // h).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, qkv_bias=True, eps=1e-6):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, num_heads, qkv_bias)
        self.norm2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


# ----------------------------------------------------------------------------------------------------------
# Patch embeddings and backbone (§3.3)
# ----------------------------------------------------------------------------------------------------------
class PatchEmbed(nn.Module):
    """kernel_size 7: 3-conv stem (s2, s1, s2), each conv(bias) + BN + ReLU; kernel_size 3: conv3x3 s2 p1 + BN + ReLU."""

    def __init__(self, kernel_size, in_chans, embed_dim):
        super().__init__()
        if kernel_size == 7:
            self.proj = nn.Sequential(
                nn.Conv2d(in_chans, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                nn.Conv2d(32, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                nn.Conv2d(32, embed_dim, 3, 2, 1), nn.BatchNorm2d(embed_dim), nn.ReLU(inplace=True))
        else:
            self.proj = nn.Sequential(nn.Conv2d(in_chans, embed_dim, 3, 2, 1), nn.BatchNorm2d(embed_dim),
                                      nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.proj(x)
        _, _, H, W = x.shape
        return x.flatten(2).transpose(1, 2), H, W


def resize_pos_embed(pos, H, W):
    """pos [1, S*S, C] laid out row-major on an S x S grid -> [1, H*W, C] (bilinear, align_corners=False).
    Identity (no interpolation call) when the grid already matches, as PyTorch's same-size fast path."""
    _, L, C = pos.shape
    S = int(L ** 0.5)
    assert S * S == L
    if (S, S) == (H, W):
        return pos
    p = pos.reshape(1, S, S, C).permute(0, 3, 1, 2)
    p = F.interpolate(p, size=(H, W), mode="bilinear", align_corners=False)
    return p.flatten(2).transpose(1, 2)


class SoftmaxFreeVisionTransformer(nn.Module):
    def __init__(self, img_size=224, in_chans=3, num_classes=1000, embed_dims=(64, 128, 320, 512),
                 num_heads=None, mlp_ratios=(8, 8, 4, 4), qkv_bias=True, depths=(1, 2, 3, 2), sr_ratios=(8, 4, 2, 1),
                 newton_max_iter=20, norm=False):
        super().__init__()
        if num_heads is None:
            num_heads = [c // HEAD_DIM for c in embed_dims]
        self.img_size = img_size
        self.num_classes = num_classes
        self.embed_dims = list(embed_dims)
        self.num_heads = list(num_heads)
        self.mlp_ratios = list(mlp_ratios)
        self.depths = list(depths)
        self.sr_ratios = list(sr_ratios)
        self.newton_max_iter = newton_max_iter
        self.norm_variant = norm
        # tables sized for 224 whatever img_size (docs/models.md §10); registration order = official key order
        g = 224 // 4
        self.pos_embed1 = nn.Parameter(torch.zeros(1, g * g, embed_dims[0]))
        self.pos_embed2 = nn.Parameter(torch.zeros(1, (g // 2) ** 2, embed_dims[1]))
        self.pos_embed3 = nn.Parameter(torch.zeros(1, (g // 4) ** 2, embed_dims[2]))
        self.pos_embed4 = nn.Parameter(torch.zeros(1, (g // 8) ** 2 + 1, embed_dims[3]))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dims[3]))
        self.patch_embed1 = PatchEmbed(7, in_chans, embed_dims[0])
        self.patch_embed2 = PatchEmbed(3, embed_dims[0], embed_dims[1])
        self.patch_embed3 = PatchEmbed(3, embed_dims[1], embed_dims[2])
        self.patch_embed4 = PatchEmbed(3, embed_dims[2], embed_dims[3])
        for s in range(3):
            setattr(self, f"block{s + 1}", nn.ModuleList([
                SoftmaxFreeTransformerBlock(embed_dims[s], num_heads[s], sr_ratios[s], V_CONV_KERNELS[s],
                                            newton_max_iter, norm) for _ in range(depths[s])]))
        self.block4 = nn.ModuleList([Block(embed_dims[3], num_heads[3], mlp_ratios[3], qkv_bias, eps=1e-6)
                                     for _ in range(depths[3])])
        self.norm = nn.LayerNorm(embed_dims[3], eps=1e-6)
        self.head = nn.Linear(embed_dims[3], num_classes)

    def forward_features(self, x):
        B = x.shape[0]
        for s in range(3):
            x, H, W = getattr(self, f"patch_embed{s + 1}")(x)
            x = x + resize_pos_embed(getattr(self, f"pos_embed{s + 1}"), H, W)
            for blk in getattr(self, f"block{s + 1}"):
                x = blk(x, H, W)
            x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        x, H, W = self.patch_embed4(x)
        pos4 = torch.cat((self.pos_embed4[:, 0:1], resize_pos_embed(self.pos_embed4[:, 1:], H, W)), dim=1)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1) + pos4
        for blk in self.block4:
            x = blk(x)
        x = self.norm(x)
        return x[:, 0]

    def forward(self, x):
        return self.head(self.forward_features(x))


# ----------------------------------------------------------------------------------------------------------
# Factories (§3.2). soft_small defaults to the published [1,3,7,4] (the code registers [1,3,20,4]).
# ----------------------------------------------------------------------------------------------------------
_CFGS = {
    "tiny": ((64, 128, 320, 512), (1, 2, 3, 2)),
    "small": ((64, 128, 320, 512), (1, 3, 7, 4)),
    "medium": ((64, 128, 288, 512), (1, 3, 29, 5)),
    "large": ((64, 128, 320, 512), (1, 3, 40, 5)),
    "huge": ((64, 128, 352, 512), (1, 5, 49, 5)),
}


def _soft(size, norm, img_size=224, num_classes=1000, depths=None, newton_max_iter=20, **kw):
    dims, d = _CFGS[size]
    return SoftmaxFreeVisionTransformer(img_size=img_size, num_classes=num_classes, embed_dims=dims,
                                        depths=tuple(depths) if depths is not None else d,
                                        newton_max_iter=newton_max_iter, norm=norm, **kw)


def soft_tiny(**kw):
    return _soft("tiny", False, **kw)


def soft_small(**kw):
    return _soft("small", False, **kw)


def soft_medium(**kw):
    return _soft("medium", False, **kw)


def soft_large(**kw):
    return _soft("large", False, **kw)


def soft_huge(**kw):
    return _soft("huge", False, **kw)


def soft_norm_tiny(**kw):
    return _soft("tiny", True, **kw)


def soft_norm_small(**kw):
    return _soft("small", True, **kw)


def soft_norm_medium(**kw):
    return _soft("medium", True, **kw)


def soft_norm_large(**kw):
    return _soft("large", True, **kw)


def soft_norm_huge(**kw):
    return _soft("huge", True, **kw)


FACTORIES = {f.__name__: f for f in (soft_tiny, soft_small, soft_medium, soft_large, soft_huge, soft_norm_tiny,
                                     soft_norm_small, soft_norm_medium, soft_norm_large, soft_norm_huge)}

# docs/models.md §3.2 [ran]: (factory, depths override or None, exact parameter count)
EXPECTED_PARAMS = [
    ("soft_tiny", None, 13_069_056),
    ("soft_small", (1, 3, 20, 4), 38_858_462),
    ("soft_small", None, 24_110_000),  # "24.11M": checked to +-5e3
    ("soft_medium", None, 45_812_707),
    ("soft_large", None, 64_700_646),
    ("soft_huge", None, 87_108_273),
]


def self_check(dump_dir=None, verbose=True):
    """Parameter counts vs §3.2 (Norm variants must equal their SOFT twins) and, with dump_dir, the SOFT-Tiny key
    dump (names, shapes, order; soft_tiny and soft_norm_tiny). Returns the list of failures."""
    import os
    from . import check_keys_against_dump
    fails = []
    torch.set_grad_enabled(False)
    for name, depths, want in EXPECTED_PARAMS:
        for fname in (name, name.replace("soft_", "soft_norm_")):
            n = sum(p.numel() for p in FACTORIES[fname](depths=depths).parameters())
            ok = n == want if want % 1000 else abs(n - want) <= 5000
            if verbose:
                print(f"  params {fname:16s} depths {str(depths or 'default'):14s} {n:>11,d}  expected {want:>11,d}  "
                      f"{'ok' if ok else 'MISMATCH'}")
            if not ok:
                fails.append(f"{fname}{depths or ''}: {n} params, expected {want}")
    if dump_dir:
        path = os.path.join(dump_dir, "soft_tiny_state_dict.txt")
        if not os.path.exists(path):
            fails.append(f"{path} not found")
        else:
            for fname in ("soft_tiny", "soft_norm_tiny"):
                errs = check_keys_against_dump(FACTORIES[fname](), path)
                if verbose:
                    print(f"  keys   {fname:16s} vs {os.path.basename(path)}: {'ok' if not errs else errs[:5]}")
                fails += [f"{fname}: {e}" for e in errs]
    return fails
