"""ViT / DeiT reference (docs/models.md §5): timm 0.3.x `VisionTransformer` as used by facebookresearch/deit, written from
the spec. State_dict key names and order are timm's (§5.3)."""
import torch
import torch.nn as nn


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch_size=16, in_chans=3, embed_dim=768):
        super().__init__()
        self.img_size = (img_size, img_size)
        self.patch_size = (patch_size, patch_size)
        self.num_patches = (img_size // patch_size) * (img_size // patch_size)
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        B, C, H, W = x.shape
        assert (H, W) == self.img_size, f"input {H}x{W} does not match the model ({self.img_size[0]}x{self.img_size[1]})"
        return self.proj(x).flatten(2).transpose(1, 2)  # [B, N, C]


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=True):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        h = self.num_heads
        qkv = self.qkv(x).reshape(B, N, 3, h, C // h).permute(2, 0, 3, 1, 4)  # rows [q|k|v], head-major
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()  # exact erf form
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, qkv_bias=True, eps=1e-6, attn_factory=None):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        # attn_factory(dim, num_heads) -> a module mapping [B,N,C] to [B,N,C] (its own output projection
        # included): the linear-attention family's ViTs (docs/models.md §7) swap the attention this way.
        self.attn = attn_factory(dim, num_heads) if attn_factory else Attention(dim, num_heads, qkv_bias)
        self.norm2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Module):
    """Pre-norm ViT with a cls token (and, if `distilled`, a dist token and `head_dist`, DeiT's
    DistilledVisionTransformer; eval output = (head(x[:,0]) + head_dist(x[:,1])) / 2)."""

    def __init__(self, img_size=224, patch_size=16, in_chans=3, num_classes=1000, embed_dim=768, depth=12,
                 num_heads=12, mlp_ratio=4.0, qkv_bias=True, eps=1e-6, distilled=False, attn_factory=None):
        super().__init__()
        self.num_classes = num_classes
        self.embed_dim = embed_dim
        self.depth = depth
        self.num_heads = num_heads
        self.distilled = distilled
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        n_tok = 2 if distilled else 1
        # registration order gives timm's state_dict order: cls_token, pos_embed, dist_token, patch_embed.*, ...
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + n_tok, embed_dim))
        if distilled:
            self.dist_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, mlp_ratio, qkv_bias, eps, attn_factory) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim, eps=eps)
        self.head = nn.Linear(embed_dim, num_classes)
        if distilled:
            self.head_dist = nn.Linear(embed_dim, num_classes)

    def forward_features(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        toks = [self.cls_token.expand(B, -1, -1)]
        if self.distilled:
            toks.append(self.dist_token.expand(B, -1, -1))
        x = torch.cat(toks + [x], dim=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)

    def forward(self, x):
        x = self.forward_features(x)
        if self.distilled:
            return (self.head(x[:, 0]) + self.head_dist(x[:, 1])) / 2
        return self.head(x[:, 0])


def _vit(embed_dim, num_heads, distilled=False, num_classes=1000, img_size=224, depth=12, patch_size=16, **kw):
    return VisionTransformer(img_size=img_size, patch_size=patch_size, num_classes=num_classes, embed_dim=embed_dim,
                             depth=depth, num_heads=num_heads, mlp_ratio=4.0, qkv_bias=True, eps=1e-6,
                             distilled=distilled, **kw)


def deit_tiny(**kw):
    return _vit(192, 3, **kw)


def deit_small(**kw):
    return _vit(384, 6, **kw)


def deit_base(**kw):
    return _vit(768, 12, **kw)


def deit_tiny_distilled(**kw):
    return _vit(192, 3, distilled=True, **kw)


def deit_small_distilled(**kw):
    return _vit(384, 6, distilled=True, **kw)


def deit_base_distilled(**kw):
    return _vit(768, 12, distilled=True, **kw)
