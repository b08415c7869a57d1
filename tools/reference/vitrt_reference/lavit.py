"""LaViT reference: the project's pinned reading of "You Only Need Less Attention at Each Stage in Vision
Transformers" (CVPR 2024), written from docs/models.md §4.2 (no upstream code exists). PVT v2 layout (§6.2):
OverlapPatchEmbed stems, spatial-reduction attention with sr 8,4,2,1, DWConv MLP, norm{s} after every stage,
mean-pooled head; head dim 64 (h = C/64).

Per stage, the first layers are Vanilla-Attention (VA) layers, the last `la_layers[s]` are Less-Attention (LA)
layers. Every layer keeps its final pre-softmax scores S [B,h,N,N'] (N' = (H/32)(W/32) in every stage):
  VA: S = (q @ kᵀ)·d^-0.5  (+ gamma_s[h]·AR_s(S_last of stage s-1) in layer 0 of stages s >= 2, after scaling)
  LA: S = psi(theta(S_prev)ᵀ)ᵀ   (theta: Linear(N',N') on the key axis, psi: Linear(N,N) on the query axis)
then x += proj(softmax(S) @ v). The model runs only at the resolution its psi/theta were built for."""
import math

import torch
import torch.nn as nn

from .pvt_v2 import Mlp, OverlapPatchEmbed

HEAD_DIM = 64
EMBED_DIMS = (64, 128, 320, 512)
MLP_RATIOS = (8, 8, 4, 4)
SR_RATIOS = (8, 4, 2, 1)

CONFIGS = {  # depths, LA layers per stage (the last ones of each stage)
    "lavit_tiny": dict(depths=(2, 2, 2, 2), la_layers=(0, 1, 1, 1)),
    "lavit_small": dict(depths=(3, 4, 6, 3), la_layers=(0, 2, 4, 2)),
    "lavit_base": dict(depths=(3, 4, 18, 3), la_layers=(0, 2, 14, 2)),
}
EXPECTED_PARAMS_M = {"lavit_tiny": 13.9, "lavit_small": 24.8, "lavit_base": 43.1}  # §4.2, 224², 1000 classes


def _heads_first(t, B, N, h):  # [B,N,C] -> [B,h,N,d]
    return t.reshape(B, N, h, -1).permute(0, 2, 1, 3)


class LaViTAttention(nn.Module):
    """VA (`attn.q`, `attn.kv`) or LA (`attn.v`, `attn.theta`, `attn.psi`) attention; both have `attn.sr` +
    `attn.norm` (LN eps 1e-5) when sr > 1, and `attn.proj`. forward returns (out [B,N,C], S [B,h,N,N'])."""

    def __init__(self, dim, num_heads, sr_ratio, less_attention, n_query, n_key):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.less_attention = less_attention
        self.n_query, self.n_key = n_query, n_key
        self.sr_ratio = sr_ratio
        if less_attention:
            self.v = nn.Linear(dim, dim)
            self.theta = nn.Linear(n_key, n_key)    # key axis
            self.psi = nn.Linear(n_query, n_query)  # query axis
        else:
            self.q = nn.Linear(dim, dim)
            self.kv = nn.Linear(dim, 2 * dim)       # rows [0:C] = K, [C:2C] = V
        self.proj = nn.Linear(dim, dim)
        if sr_ratio > 1:
            self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
            self.norm = nn.LayerNorm(dim, eps=1e-5)

    def reduce(self, x, H, W):
        if self.sr_ratio == 1:
            return x
        B, N, C = x.shape
        xr = self.sr(x.transpose(1, 2).reshape(B, C, H, W)).reshape(B, C, -1).transpose(1, 2)
        return self.norm(xr)

    def forward(self, x, H, W, prev_scores=None, residual=None):
        B, N, C = x.shape
        h = self.num_heads
        assert N == self.n_query, f"{N} query tokens but this layer was built for {self.n_query} (psi/theta size)"
        xr = self.reduce(x, H, W)
        Nk = xr.shape[1]
        assert Nk == self.n_key, f"{Nk} key tokens but this layer was built for {self.n_key} (psi/theta size)"
        if self.less_attention:
            assert residual is None, "the attention residual goes into a stage's first (VA) layer"
            assert prev_scores is not None and prev_scores.shape == (B, h, N, Nk), \
                "a LA layer needs the previous layer's scores of the same stage"
            v = _heads_first(self.v(xr), B, Nk, h)
            t = self.theta(prev_scores)                            # [B,h,N,N'] over the key axis
            s = self.psi(t.transpose(-2, -1)).transpose(-2, -1)    # over the query axis
        else:
            q = _heads_first(self.q(x), B, N, h)
            kv = self.kv(xr).reshape(B, Nk, 2, h, C // h).permute(2, 0, 3, 1, 4)
            k, v = kv[0], kv[1]
            s = (q @ k.transpose(-2, -1)) * self.scale
            if residual is not None:
                s = s + residual
        o = (s.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(o), s


class LaViTBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, sr_ratio, less_attention, n_query, n_key):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = LaViTAttention(dim, num_heads, sr_ratio, less_attention, n_query, n_key)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x, H, W, prev_scores=None, residual=None):
        a, s = self.attn(self.norm1(x), H, W, prev_scores, residual)
        x = x + a
        x = x + self.mlp(self.norm2(x), H, W)
        return x, s


class AttentionResidual(nn.Module):
    """attn_res{s}: [B,h1,N1,N'] (query grid H1 x W1) -> gamma[h2] · pw(dw(.)) : [B,h2,N2,N'] (§4.2 recipe)."""

    def __init__(self, h1, h2):
        super().__init__()
        self.h1, self.h2 = h1, h2
        self.dw = nn.Conv2d(h1, h1, kernel_size=2, stride=2, groups=h1, bias=True)
        self.pw = nn.Conv2d(h1, h2, kernel_size=1, bias=True)
        self.gamma = nn.Parameter(torch.zeros(h2))

    def forward(self, s, H1, W1):
        B, h1, N1, Nk = s.shape
        assert h1 == self.h1 and N1 == H1 * W1
        a = s.permute(0, 3, 1, 2).reshape(B * Nk, h1, H1, W1)
        a = self.pw(self.dw(a))
        H2, W2 = a.shape[-2:]
        a = a.reshape(B, Nk, self.h2, H2 * W2).permute(0, 2, 3, 1)
        return self.gamma.view(1, self.h2, 1, 1) * a


class LaViT(nn.Module):
    def __init__(self, img_size=224, in_chans=3, num_classes=1000, embed_dims=EMBED_DIMS, mlp_ratios=MLP_RATIOS,
                 depths=(2, 2, 2, 2), la_layers=(0, 1, 1, 1), sr_ratios=SR_RATIOS, head_dim=HEAD_DIM):
        super().__init__()
        assert img_size % 32 == 0, f"LaViT needs an image side that is a multiple of 32, got {img_size}"
        self.img_size = img_size
        self.num_classes = num_classes
        self.embed_dims = list(embed_dims)
        self.num_heads = [c // head_dim for c in embed_dims]
        assert all(c % head_dim == 0 for c in embed_dims)
        self.mlp_ratios = list(mlp_ratios)
        self.depths = list(depths)
        self.la_layers = list(la_layers)
        self.sr_ratios = list(sr_ratios)
        self.num_stages = len(depths)
        n_key = (img_size // 32) ** 2
        self.grids = []
        side = img_size // 4
        for i in range(self.num_stages):
            if i > 0:
                side //= 2
            self.grids.append((side, side))
            assert (side // sr_ratios[i]) ** 2 == n_key, "sr ratios must give N' = (H/32)(W/32) in every stage"
            assert 0 <= la_layers[i] < depths[i], "the first layer of every stage is a VA layer"
            n_query = side * side
            setattr(self, f"patch_embed{i + 1}",
                    OverlapPatchEmbed(patch_size=7 if i == 0 else 3, stride=4 if i == 0 else 2,
                                      in_chans=in_chans if i == 0 else embed_dims[i - 1], embed_dim=embed_dims[i]))
            if i > 0:
                setattr(self, f"attn_res{i + 1}", AttentionResidual(self.num_heads[i - 1], self.num_heads[i]))
            n_va = depths[i] - la_layers[i]
            setattr(self, f"block{i + 1}", nn.ModuleList([
                LaViTBlock(embed_dims[i], self.num_heads[i], mlp_ratios[i], sr_ratios[i], j >= n_va, n_query, n_key)
                for j in range(depths[i])]))
            setattr(self, f"norm{i + 1}", nn.LayerNorm(embed_dims[i], eps=1e-6))
        self.head = nn.Linear(embed_dims[-1], num_classes)

    def forward_features(self, x, collect=None):
        """collect: optional list; gets one (block name, hidden state after the block, kept scores) per block."""
        B = x.shape[0]
        assert tuple(x.shape[-2:]) == (self.img_size, self.img_size), \
            f"this LaViT was built for {self.img_size}x{self.img_size} (psi/theta sizes), got {tuple(x.shape[-2:])}"
        s_last, grid_last = None, None
        for i in range(self.num_stages):
            x, H, W = getattr(self, f"patch_embed{i + 1}")(x)
            assert (H, W) == self.grids[i]
            residual = None
            if i > 0:
                residual = getattr(self, f"attn_res{i + 1}")(s_last, *grid_last)
            s = None
            for j, blk in enumerate(getattr(self, f"block{i + 1}")):
                x, s = blk(x, H, W, prev_scores=s, residual=residual if j == 0 else None)
                if collect is not None:
                    collect.append((f"block{i + 1}.{j}", x, s))
            s_last, grid_last = s, (H, W)
            x = getattr(self, f"norm{i + 1}")(x)
            if i != self.num_stages - 1:
                x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        return x.mean(dim=1)

    def forward(self, x):
        return self.head(self.forward_features(x))

    def layer_types(self):
        """[(block name, 'VA'|'LA')] in execution order."""
        return [(f"block{i + 1}.{j}", "LA" if b.attn.less_attention else "VA")
                for i in range(self.num_stages) for j, b in enumerate(getattr(self, f"block{i + 1}"))]


def _lavit(name, num_classes=1000, img_size=224):
    return LaViT(img_size=img_size, num_classes=num_classes, **CONFIGS[name])


def lavit_tiny(num_classes=1000, img_size=224):
    return _lavit("lavit_tiny", num_classes, img_size)


def lavit_small(num_classes=1000, img_size=224):
    return _lavit("lavit_small", num_classes, img_size)


def lavit_base(num_classes=1000, img_size=224):
    return _lavit("lavit_base", num_classes, img_size)


# ----------------------------------------------------------------------------------------------------------
# Test initialisation (on top of common.init_for_tests)
# ----------------------------------------------------------------------------------------------------------
@torch.no_grad()
def init_lavit_extras(model, seed, mix_noise=0.5, gamma_mean=0.6, gamma_std=0.25):
    """After common.init_for_tests: Θ/Ψ = identity + mix_noise·N(0, 1/fan_in) (so reused scores stay meaningful
    but every weight matters), their biases 0.1 N; attn_res gamma = gamma_mean + gamma_std·N (a residual that
    really moves the scores). float32 draws from a float64 stream (platform-stable)."""
    gen = torch.Generator().manual_seed(int(seed) * 7919 + 17)

    def rnd(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64).float()

    for name, m in model.named_modules():
        if isinstance(m, LaViTAttention) and m.less_attention:
            for lin in (m.theta, m.psi):
                n = lin.weight.shape[0]
                lin.weight.copy_(torch.eye(n) + rnd(n, n) * (mix_noise / math.sqrt(n)))
                lin.bias.copy_(0.1 * rnd(n))
        elif isinstance(m, AttentionResidual):
            m.gamma.copy_(gamma_mean + gamma_std * rnd(m.h2))
    return model


# ----------------------------------------------------------------------------------------------------------
# Cost of the scores: LA vs VA at the same position
# ----------------------------------------------------------------------------------------------------------
def score_macs(model):
    """Per LA layer: multiply-accumulates of what a VA layer at the same position would spend on its scores
    (q projection N·C², k projection N'·C², Q·Kᵀ N·N'·C) vs the LA layer (Θ: h·N·N'², Ψ: h·N'·N²).
    Biases, v, proj, MLP are common to both and not counted. Returns a list of dicts."""
    rows = []
    for i in range(model.num_stages):
        C, h = model.embed_dims[i], model.num_heads[i]
        H, W = model.grids[i]
        N = H * W
        Nk = (model.img_size // 32) ** 2
        for j, b in enumerate(getattr(model, f"block{i + 1}")):
            if not b.attn.less_attention:
                continue
            va = dict(q=N * C * C, k=Nk * C * C, qk=N * Nk * C)
            la = dict(theta=h * N * Nk * Nk, psi=h * Nk * N * N)
            rows.append(dict(block=f"block{i + 1}.{j}", N=N, Nk=Nk, C=C, h=h, va=va, la=la,
                             va_total=sum(va.values()), la_total=sum(la.values()),
                             saved=sum(va.values()) - sum(la.values())))
    return rows


def self_check(verbose=True):
    """Parameter counts at 224², 1000 classes vs §4.2 (rounded to 0.1 M). Returns failures."""
    fails = []
    for name, want in EXPECTED_PARAMS_M.items():
        n = sum(p.numel() for p in _lavit(name).parameters())
        ok = abs(n / 1e6 - want) < 0.05
        if verbose:
            print(f"  params {name:12s} {n:>11,d}  ({n / 1e6:.2f} M, §4.2: {want} M)  {'ok' if ok else 'MISMATCH'}")
        if not ok:
            fails.append(f"{name}: {n} params, expected {want} M")
    return fails
