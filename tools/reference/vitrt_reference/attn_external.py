"""External Attention (EANet) references (docs/linear_attention.md, "External Attention"), written from the
official code's forward so that torch.onnx.export gives the graph the official modules give. Key names are the
official ones (EAMLP: trans_dims, linear_0, linear_1, proj; xmu-xiaoma666: mk, mv).

EAMLPAttention(dim, num_heads) is EAMLP's multi-head `Attention` (EAMLP/models/transformer_block.py): coef 4,
trans_dims Linear(C, 4C), 4h heads of width 4C/(4h), linear_0 Linear(d, 64) and linear_1 Linear(64, d) with
bias, softmax over the tokens, division by 1e-9 + the sum over the 64 slots, proj Linear(4C, C). It plugs into
deit.VisionTransformer as attn_factory=EAMLPAttention.

ExternalAttention(d_model, S) is xmu-xiaoma666's one-head module: mk, mv without bias, no eps."""
import torch.nn as nn


class EAMLPAttention(nn.Module):
    def __init__(self, dim, num_heads=8, slots=64, coef=4):
        super().__init__()
        assert dim % num_heads == 0
        self.coef = coef
        self.trans_dims = nn.Linear(dim, dim * coef)
        self.num_heads = num_heads * coef
        self.k = slots
        self.linear_0 = nn.Linear(dim * coef // self.num_heads, self.k)
        self.linear_1 = nn.Linear(self.k, dim * coef // self.num_heads)
        self.proj = nn.Linear(dim * coef, dim)

    def forward(self, x):
        B, N, C = x.shape
        x = self.trans_dims(x)  # B, N, 4C
        x = x.view(B, N, self.num_heads, -1).permute(0, 2, 1, 3)
        attn = self.linear_0(x)
        attn = attn.softmax(dim=-2)
        attn = attn / (1e-9 + attn.sum(dim=-1, keepdim=True))
        x = self.linear_1(attn).permute(0, 2, 1, 3).reshape(B, N, -1)
        return self.proj(x)


class ExternalAttention(nn.Module):
    def __init__(self, d_model, S=64):
        super().__init__()
        self.mk = nn.Linear(d_model, S, bias=False)
        self.mv = nn.Linear(S, d_model, bias=False)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, queries):
        attn = self.mk(queries)  # bs, n, S
        attn = self.softmax(attn)  # over the tokens
        attn = attn / attn.sum(dim=2, keepdim=True)  # over the slots, no eps
        return self.mv(attn)  # bs, n, d_model
