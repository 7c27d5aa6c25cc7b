"""A character-level transformer trained on Shakespeare's sonnets, with ember.

    python examples/char_transformer.py                 # 600 steps, about 30 s on 2 cores
    python examples/char_transformer.py --steps 2000    # longer, better verse
    python examples/char_transformer.py --backend torch # the same program on PyTorch
    python examples/char_transformer.py --plot loss.png # the loss curve elsewhere

It trains a small GPT-style model (token and position embeddings, pre-norm blocks of
causal self-attention and an MLP) to predict the next character of the text in
examples/data/sonnets.txt, shows a tqdm progress bar with the loss and tokens per second,
prints a sample the model writes, and draws the loss of every step and its moving average
with matplotlib into a PNG file (out/char_transformer_loss.png by default). Install its
two dependencies with ember: `pip install ".[examples]"`.

The model is PyTorch code: it is written once against the `torch` module it is given,
so `--backend torch` runs exactly the same program on PyTorch for comparison (and the
benchmark runner times one training step of it under both libraries).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = os.path.join(HERE, "data", "sonnets.txt")


# ---- the model: PyTorch code, for whichever `torch` runs it -----------------------------

def make_model_class(torch):
    """The model's class, built on `torch` (ember, or PyTorch itself)."""
    nn = torch.nn
    F = torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, dim: int, heads: int, dropout: float):
            super().__init__()
            self.heads = heads
            self.dropout = dropout
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            batch, length, dim = x.shape
            q, k, v = self.qkv(x).split(dim, dim=2)
            # (batch, length, dim) -> (batch, heads, length, dim / heads)
            q, k, v = (t.view(batch, length, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
            return self.proj(y.transpose(1, 2).reshape(batch, length, dim))

    class Block(nn.Module):
        def __init__(self, dim: int, heads: int, dropout: float):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attention = CausalSelfAttention(dim, heads, dropout)
            self.norm2 = nn.LayerNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class CharTransformer(nn.Module):
        def __init__(self, vocab: int, context: int, dim: int = 96, layers: int = 3, heads: int = 4,
                     dropout: float = 0.1):
            super().__init__()
            self.context = context
            self.token = nn.Embedding(vocab, dim)
            self.position = nn.Embedding(context, dim)
            self.blocks = nn.Sequential(*[Block(dim, heads, dropout) for _ in range(layers)])
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab)

        def forward(self, idx, targets=None):
            positions = torch.arange(idx.shape[1])
            x = self.blocks(self.token(idx) + self.position(positions))
            logits = self.head(self.norm(x))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

        @torch.no_grad()
        def generate(self, idx, count: int, temperature: float = 0.8, generator=None):
            """idx (1, n) continued by count sampled characters."""
            for _ in range(count):
                logits, _ = self(idx[:, -self.context:])
                probs = F.softmax(logits[:, -1] / temperature, dim=-1)
                idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
            return idx

    return CharTransformer


class Text:
    """The training text as a tensor of character ids, and random windows of it."""

    def __init__(self, torch, path: str = TEXT):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.torch = torch
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.data = torch.tensor([self.index[c] for c in text], dtype=torch.long)

    def encode(self, s: str):
        return self.torch.tensor([[self.index[c] for c in s]], dtype=self.torch.long)

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in ids.tolist())

    def batch(self, size: int, context: int, generator=None):
        """(inputs, targets), each (size, context): targets are inputs shifted by one."""
        torch = self.torch
        starts = torch.randint(len(self.data) - context - 1, (size, 1), generator=generator)
        windows = starts + torch.arange(context)
        return self.data[windows], self.data[windows + 1]


def make_training(torch, steps: int, batch: int = 16, context: int = 64, lr: float = 1e-2, seed: int = 0,
                  autocast_dtype=None, **model):
    """(model, text, one training step returning the loss as a float, generator). With
    autocast_dtype (torch.bfloat16), forward and loss run under CPU autocast in it."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    text = Text(torch)
    net = make_model_class(torch)(len(text.chars), context, **model)
    optimizer = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 20)
    # linear warm-up, then a cosine decay to a tenth of lr
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(
        (s + 1) / warmup, 0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, s / steps)))))

    def step() -> float:
        x, y = text.batch(batch, context, generator)
        if autocast_dtype is None:
            _, loss = net(x, y)
        else:
            with torch.autocast("cpu", dtype=autocast_dtype):
                _, loss = net(x, y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        return loss.item()

    return net, text, step, generator


# ---- reporting: the loss curve ------------------------------------------------------------

def smoothed(values: list[float], decay: float = 0.9) -> list[float]:
    """The exponential moving average of values, bias-corrected as in Adam (divided by
    1 - decay**n) so that its start follows the first values rather than lagging behind."""
    average, out = 0.0, []
    for n, value in enumerate(values, 1):
        average = decay * average + (1 - decay) * value
        out.append(average / (1 - decay**n))
    return out


def plot_losses(losses: list[float], path: str, title: str = "training loss"):
    """Draws the loss of every step and its moving average into a PNG file at path; returns the figure."""
    # Imported here so that the model and the training step (the tests, the benchmark
    # runner) need neither matplotlib nor a display: Agg renders straight to the file.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    steps = range(1, len(losses) + 1)
    axes.plot(steps, losses, color="#6baed6", linewidth=1, label="loss of each step")
    axes.plot(steps, smoothed(losses), color="#08519c", linewidth=2, label="moving average (EMA, decay 0.9)")
    axes.set(title=title, xlabel="step", ylabel="loss (cross-entropy, nats)", xlim=(1, max(2, len(losses))))
    axes.grid(alpha=0.3)
    axes.legend(loc="upper right")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path)
    return figure


# ---- the program --------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600, help="training steps (default 600)")
    parser.add_argument("--batch", type=int, default=16, help="sequences per step (default 16)")
    parser.add_argument("--context", type=int, default=64, help="characters per sequence (default 64)")
    parser.add_argument("--layers", type=int, default=3, help="transformer blocks (default 3)")
    parser.add_argument("--dim", type=int, default=96, help="model width (default 96)")
    parser.add_argument("--lr", type=float, default=1e-2, help="peak learning rate (default 0.01)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=400, help="characters to generate (default 400)")
    parser.add_argument("--plot", default="out/char_transformer_loss.png", help="where the loss curve goes")
    parser.add_argument("--backend", choices=("ember", "torch"), default="ember")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")

    torch = importlib.import_module(args.backend)
    net, text, step, generator = make_training(torch, args.steps, args.batch, args.context, args.lr, args.seed,
                                               dim=args.dim, layers=args.layers)
    parameters = sum(p.numel() for p in net.parameters())
    print(f"{args.backend} {torch.__version__}: {parameters:,} parameters, {len(text.data):,} characters "
          f"of text, {len(text.chars)} distinct", file=sys.stderr)

    from tqdm import tqdm  # here, like matplotlib in plot_losses: only the program needs it

    losses = []
    tokens = args.batch * args.context
    started = time.perf_counter()
    bar = tqdm(range(1, args.steps + 1), desc="training", unit="step", file=sys.stderr)
    for i in bar:
        losses.append(step())
        elapsed = time.perf_counter() - started
        recent = losses[-10:]
        bar.set_postfix({"loss": f"{sum(recent) / len(recent):.3f}", "tokens/s": f"{i * tokens / elapsed:,.0f}"},
                        refresh=False)
    print(f"trained in {elapsed:.1f} s: {args.steps * tokens / elapsed:,.0f} tokens/s, "
          f"final loss {sum(losses[-10:]) / len(losses[-10:]):.3f}", file=sys.stderr)

    net.eval()
    sample = net.generate(text.encode("\n"), args.sample, generator=generator)
    print(text.decode(sample[0]))
    plot_losses(losses, args.plot, f"Character transformer on the sonnets: training loss "
                                 f"({args.backend} {torch.__version__}, {args.steps} steps)")
    print(f"loss curve: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
