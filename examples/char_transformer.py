"""A character-level transformer trained on Shakespeare's sonnets, with ember.

    python examples/char_transformer.py                 # 600 steps, about 30 s on 2 cores
    python examples/char_transformer.py --steps 2000    # longer, better verse
    python examples/char_transformer.py --backend torch # the same program on PyTorch

It trains a small GPT-style model (token and position embeddings, pre-norm blocks of
causal self-attention and an MLP) to predict the next character of the text in
examples/data/sonnets.txt, shows a progress bar with the loss and tokens per second,
prints a sample the model writes, and draws the loss curve into a PNG file.

The model is PyTorch code: it is written once against the `torch` module it is given,
so `--backend torch` runs exactly the same program on PyTorch for comparison (and the
benchmark runner times one training step of it under both libraries).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import struct
import sys
import time
import zlib

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


def make_training(torch, steps: int, batch: int = 16, context: int = 64, lr: float = 1e-2, seed: int = 0, **model):
    """(model, text, one training step returning the loss as a float, generator)."""
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
        _, loss = net(x, y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        return loss.item()

    return net, text, step, generator


# ---- reporting: a progress bar and a loss curve -----------------------------------------

def progress(step: int, steps: int, loss: float, tokens_per_s: float, width: int = 30) -> None:
    done = step * width // steps
    line = f"[{'#' * done}{'.' * (width - done)}] {step}/{steps}  loss {loss:.3f}  {tokens_per_s:,.0f} tokens/s"
    if sys.stderr.isatty():
        print("\r" + line, end="", file=sys.stderr, flush=True)
        if step == steps:
            print(file=sys.stderr)
    elif step == steps or step % max(1, steps // 10) == 0:  # a log, not a bar
        print(line, file=sys.stderr, flush=True)


# 3x5 pixel digits (and '.'), each row three bits, for the axis labels
GLYPHS = {
    "0": (7, 5, 5, 5, 7), "1": (2, 6, 2, 2, 7), "2": (7, 1, 7, 4, 7), "3": (7, 1, 7, 1, 7), "4": (5, 5, 7, 1, 1),
    "5": (7, 4, 7, 1, 7), "6": (7, 4, 7, 5, 7), "7": (7, 1, 1, 1, 1), "8": (7, 5, 7, 5, 7), "9": (7, 5, 7, 1, 7),
    ".": (0, 0, 0, 0, 2),
}


class Canvas:
    """An RGB image in a bytearray, with just enough drawing for a line chart."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.pixels = bytearray(b"\xff" * (width * height * 3))

    def dot(self, x: int, y: int, color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i:i + 3] = bytes(color)

    def line(self, x0: int, y0: int, x1: int, y1: int, color) -> None:
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(n + 1):
            self.dot(round(x0 + (x1 - x0) * i / n), round(y0 + (y1 - y0) * i / n), color)

    def text(self, x: int, y: int, s: str, color, scale: int = 2) -> None:
        for k, ch in enumerate(s):
            for row, bits in enumerate(GLYPHS[ch]):
                for col in range(3):
                    if bits >> (2 - col) & 1:
                        for dy in range(scale):
                            for dx in range(scale):
                                self.dot(x + (4 * k + col) * scale + dx, y + row * scale + dy, color)

    def png(self) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[y * stride:(y + 1) * stride]) for y in range(self.height))
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"tEXt", b"Title\x00training loss")
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def plot_losses(losses: list[float], path: str, width: int = 640, height: int = 360) -> None:
    """The loss per step (grey) and its mean over the last 10 steps (blue), x: steps, y: loss."""
    canvas = Canvas(width, height)
    left, right, top, bottom = 60, width - 20, 20, height - 40
    low, high = min(losses), max(losses)
    high = high if high > low else low + 1

    def xy(i: int, value: float) -> tuple[int, int]:
        x = left + round((right - left) * i / max(1, len(losses) - 1))
        return x, bottom - round((bottom - top) * (value - low) / (high - low))

    black, grey, blue = (0, 0, 0), (190, 190, 190), (31, 90, 200)
    canvas.line(left, top, left, bottom, black)
    canvas.line(left, bottom, right, bottom, black)
    for value in (low, (low + high) / 2, high):
        x, y = xy(0, value)
        canvas.line(left - 5, y, left, y, black)
        canvas.text(4, y - 5, f"{value:.2f}", black)
    for i in (0, (len(losses) - 1) // 2, len(losses) - 1):
        x, _ = xy(i, low)
        canvas.line(x, bottom, x, bottom + 5, black)
        canvas.text(x - 8, bottom + 10, str(i + 1), black)
    smooth = [sum(losses[max(0, i - 9):i + 1]) / len(losses[max(0, i - 9):i + 1]) for i in range(len(losses))]
    for series, color in ((losses, grey), (smooth, blue)):
        points = [xy(i, v) for i, v in enumerate(series)]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            canvas.line(x0, y0, x1, y1, color)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(canvas.png())


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

    losses = []
    tokens = args.batch * args.context
    started = time.perf_counter()
    for i in range(1, args.steps + 1):
        losses.append(step())
        elapsed = time.perf_counter() - started
        progress(i, args.steps, sum(losses[-10:]) / len(losses[-10:]), i * tokens / elapsed)
    print(f"trained in {elapsed:.1f} s: {args.steps * tokens / elapsed:,.0f} tokens/s, "
          f"final loss {sum(losses[-10:]) / len(losses[-10:]):.3f}", file=sys.stderr)

    net.eval()
    sample = net.generate(text.encode("\n"), args.sample, generator=generator)
    print(text.decode(sample[0]))
    plot_losses(losses, args.plot)
    print(f"loss curve: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
