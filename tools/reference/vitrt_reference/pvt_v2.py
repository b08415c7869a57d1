"""PVT v2 reference (docs/models.md §6.2): whai362/PVT `classification/pvt_v2.py`, written from the spec. State_dict key
names and order match the official dumps (pvt_v2_b2_state_dict.txt, pvt_v2_b2_li_state_dict.txt)."""
import torch
import torch.nn as nn


class DWConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, H, W)
        return self.dwconv(x).flatten(2).transpose(1, 2)


class Mlp(nn.Module):
    """fc1 -> [ReLU if linear] -> DWConv 3x3 -> GELU(erf) -> fc2"""

    def __init__(self, dim, hidden, linear=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = DWConv(hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.linear = linear
        if linear:
            self.relu = nn.ReLU()

    def forward(self, x, H, W):
        x = self.fc1(x)
        if self.linear:
            x = self.relu(x)
        x = self.act(self.dwconv(x, H, W))
        return self.fc2(x)


class Attention(nn.Module):
    """Spatial-reduction attention. sr>1: kv from Conv2d(k=s=sr) -> LN(1e-5); linear: kv from AdaptiveAvgPool2d(7) ->
    Conv2d 1x1 -> LN(1e-5) -> GELU (every stage); else kv from x."""

    def __init__(self, dim, num_heads=8, qkv_bias=True, sr_ratio=1, linear=False):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.linear = linear
        self.sr_ratio = sr_ratio
        if not linear:
            if sr_ratio > 1:
                self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
                self.norm = nn.LayerNorm(dim, eps=1e-5)
        else:
            self.pool = nn.AdaptiveAvgPool2d(7)
            self.sr = nn.Conv2d(dim, dim, kernel_size=1, stride=1)
            self.norm = nn.LayerNorm(dim, eps=1e-5)
            self.act = nn.GELU()

    def forward(self, x, H, W):
        B, N, C = x.shape
        h = self.num_heads
        q = self.q(x).reshape(B, N, h, C // h).permute(0, 2, 1, 3)
        if self.linear:
            x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
            x_ = self.sr(self.pool(x_)).reshape(B, C, -1).permute(0, 2, 1)
            x_ = self.act(self.norm(x_))
        elif self.sr_ratio > 1:
            x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
            x_ = self.sr(x_).reshape(B, C, -1).permute(0, 2, 1)
            x_ = self.norm(x_)
        else:
            x_ = x
        kv = self.kv(x_).reshape(B, -1, 2, h, C // h).permute(2, 0, 3, 1, 4)  # rows [k|v], head-major
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, qkv_bias=True, sr_ratio=1, linear=False, eps=1e-6):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, num_heads, qkv_bias, sr_ratio, linear)
        self.norm2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), linear)

    def forward(self, x, H, W):
        x = x + self.attn(self.norm1(x), H, W)
        x = x + self.mlp(self.norm2(x), H, W)
        return x


class OverlapPatchEmbed(nn.Module):
    """Conv2d(k, s, p=k//2, bias) -> flatten -> LayerNorm eps 1e-5."""

    def __init__(self, patch_size=7, stride=4, in_chans=3, embed_dim=768):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=stride, padding=patch_size // 2)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-5)

    def forward(self, x):
        x = self.proj(x)
        _, _, H, W = x.shape
        x = self.norm(x.flatten(2).transpose(1, 2))
        return x, H, W


class PyramidVisionTransformerV2(nn.Module):
    def __init__(self, img_size=224, in_chans=3, num_classes=1000, embed_dims=(64, 128, 256, 512),
                 num_heads=(1, 2, 4, 8), mlp_ratios=(4, 4, 4, 4), qkv_bias=True, depths=(3, 4, 6, 3),
                 sr_ratios=(8, 4, 2, 1), num_stages=4, linear=False):
        super().__init__()
        self.img_size = img_size
        self.num_classes = num_classes
        self.embed_dims = list(embed_dims)
        self.num_heads = list(num_heads)
        self.mlp_ratios = list(mlp_ratios)
        self.depths = list(depths)
        self.sr_ratios = list(sr_ratios)
        self.num_stages = num_stages
        self.linear = linear
        for i in range(num_stages):
            # registration order per stage: patch_embed{s}, block{s}, norm{s} (matches the official key order)
            setattr(self, f"patch_embed{i + 1}",
                    OverlapPatchEmbed(patch_size=7 if i == 0 else 3, stride=4 if i == 0 else 2,
                                      in_chans=in_chans if i == 0 else embed_dims[i - 1], embed_dim=embed_dims[i]))
            setattr(self, f"block{i + 1}", nn.ModuleList([
                Block(embed_dims[i], num_heads[i], mlp_ratios[i], qkv_bias, sr_ratios[i], linear, eps=1e-6)
                for _ in range(depths[i])]))
            setattr(self, f"norm{i + 1}", nn.LayerNorm(embed_dims[i], eps=1e-6))
        self.head = nn.Linear(embed_dims[num_stages - 1], num_classes)

    def forward_features(self, x):
        B = x.shape[0]
        for i in range(self.num_stages):
            x, H, W = getattr(self, f"patch_embed{i + 1}")(x)
            for blk in getattr(self, f"block{i + 1}"):
                x = blk(x, H, W)
            x = getattr(self, f"norm{i + 1}")(x)
            if i != self.num_stages - 1:
                x = x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        return x.mean(dim=1)

    def forward(self, x):
        return self.head(self.forward_features(x))


_B1_5 = dict(embed_dims=(64, 128, 320, 512), num_heads=(1, 2, 5, 8), sr_ratios=(8, 4, 2, 1))


def _pvt(cfg, mlp_ratios=(8, 8, 4, 4), linear=False, depths=None, default_depths=(2, 2, 2, 2), **kw):
    return PyramidVisionTransformerV2(mlp_ratios=mlp_ratios, qkv_bias=True,
                                      depths=tuple(depths) if depths is not None else default_depths,
                                      linear=linear, **cfg, **kw)


def pvt_v2_b0(**kw):
    return _pvt(dict(embed_dims=(32, 64, 160, 256), num_heads=(1, 2, 5, 8), sr_ratios=(8, 4, 2, 1)),
                default_depths=(2, 2, 2, 2), **kw)


def pvt_v2_b1(**kw):
    return _pvt(_B1_5, default_depths=(2, 2, 2, 2), **kw)


def pvt_v2_b2(**kw):
    return _pvt(_B1_5, default_depths=(3, 4, 6, 3), **kw)


def pvt_v2_b2_li(**kw):
    return _pvt(_B1_5, default_depths=(3, 4, 6, 3), linear=True, **kw)


def pvt_v2_b3(**kw):
    return _pvt(_B1_5, default_depths=(3, 4, 18, 3), **kw)


def pvt_v2_b4(**kw):
    return _pvt(_B1_5, default_depths=(3, 8, 27, 3), **kw)


def pvt_v2_b5(**kw):
    return _pvt(_B1_5, mlp_ratios=(4, 4, 4, 4), default_depths=(3, 6, 40, 3), **kw)
