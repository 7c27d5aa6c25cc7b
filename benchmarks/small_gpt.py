"""Training steps of the small transformers that issue 20 names, written for whichever
`torch` module is given (ember or PyTorch), so one program times both libraries.

Neither project's files are here (no network, and their code is not ours to copy): these
are the same architectures at the same sizes, written from their descriptions.

- nanoGPT's Shakespeare-char model at its README's CPU settings (`--block_size=64
  --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --dropout=0.0`, vocabulary 65):
  pre-norm blocks with LayerNorm without bias, causal attention through
  scaled_dot_product_attention, a 4x MLP with exact GELU, no biases in the linear layers,
  the output layer's weight tied to the token embedding, AdamW (betas 0.9/0.99, weight
  decay 0.1 on matrices only, none on norms), gradients clipped to norm 1.
- makemore's `--type transformer` (4 layers, 4 heads, 64 wide, names of up to 15 letters:
  context 16, vocabulary 27, batch 32): attention written out (q @ k^T, a causal mask
  filled with -inf, softmax, @ v), the tanh approximation of GELU written as arithmetic,
  LayerNorm with bias, AdamW (lr 5e-4, weight decay 0.01, betas 0.9/0.99), no clipping.
"""
from __future__ import annotations

import math


def _gpt_class(torch, *, bias: bool, sdpa: bool, tanh_gelu: bool):
    nn = torch.nn
    F = torch.nn.functional

    class Attention(nn.Module):
        def __init__(self, dim, heads, context):
            super().__init__()
            self.heads = heads
            self.qkv = nn.Linear(dim, 3 * dim, bias=bias)
            self.out = nn.Linear(dim, dim, bias=bias)
            if not sdpa:
                self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
                y = F.softmax(scores, dim=-1) @ v
            return self.out(y.transpose(1, 2).contiguous().view(b, t, d))

    class TanhGelu(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class Block(nn.Module):
        def __init__(self, dim, heads, context):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim, bias=bias)
            self.attention = Attention(dim, heads, context)
            self.norm2 = nn.LayerNorm(dim, bias=bias)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim, bias=bias), TanhGelu() if tanh_gelu else nn.GELU(),
                                     nn.Linear(4 * dim, dim, bias=bias))

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class GPT(nn.Module):
        def __init__(self, vocab, context, dim, layers, heads, tie):
            super().__init__()
            self.token = nn.Embedding(vocab, dim)
            self.position = nn.Embedding(context, dim)
            self.blocks = nn.ModuleList(Block(dim, heads, context) for _ in range(layers))
            self.norm = nn.LayerNorm(dim, bias=bias)
            self.head = nn.Linear(dim, vocab, bias=False)
            if tie:
                self.token.weight = self.head.weight

        def forward(self, idx, targets):
            x = self.token(idx) + self.position(torch.arange(idx.size(1)))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.norm(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    return GPT


def _step(torch, model, optimizer, batch, context, vocab, clip):
    generator = torch.Generator().manual_seed(0)
    x = torch.randint(0, vocab, (batch, context), generator=generator)
    y = torch.randint(0, vocab, (batch, context), generator=generator)

    def step():
        loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss

    return step


def nanogpt_shakespeare_char(torch):
    """One training step of nanoGPT's Shakespeare-char model at its README's CPU settings."""
    torch.manual_seed(0)
    model = _gpt_class(torch, bias=False, sdpa=True, tanh_gelu=False)(65, 64, 128, 4, 4, tie=True)
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    others = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                                   {"params": others, "weight_decay": 0.0}], lr=1e-3, betas=(0.9, 0.99))
    return _step(torch, model, optimizer, 12, 64, 65, clip=1.0)


def makemore_transformer(torch):
    """One training step of makemore's transformer on names (context 16, batch 32)."""
    torch.manual_seed(0)
    model = _gpt_class(torch, bias=True, sdpa=False, tanh_gelu=True)(27, 16, 64, 4, 4, tie=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    return _step(torch, model, optimizer, 32, 16, 27, clip=None)
