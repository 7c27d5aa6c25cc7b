"""examples/char_transformer.py: the README's example trains, samples and draws its loss
curve, and its model computes what PyTorch's computes with the same weights."""
import importlib.util
import struct
import zlib
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import ember

PATH = Path(__file__).resolve().parent.parent / "examples" / "char_transformer.py"
spec = importlib.util.spec_from_file_location("char_transformer_example", PATH)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

SMALL = ["--dim", "32", "--layers", "1", "--context", "16", "--batch", "8"]


def png_chunks(data: bytes):
    """[(kind, body)] of a PNG file, each chunk's CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def assert_matplotlib_png(path: Path, size=(800, 450)):
    chunks = png_chunks(path.read_bytes())
    assert chunks[0][0] == b"IHDR" and struct.unpack(">II", chunks[0][1][:8]) == size
    assert (b"tEXt", b"Software\x00Matplotlib version" + matplotlib.__version__.encode()) in [
        (kind, body.split(b",")[0]) for kind, body in chunks]
    # a figure with curves: empty axes compress to about 8 kB
    assert sum(len(body) for kind, body in chunks if kind == b"IDAT") > 20_000


def test_trains_samples_and_plots(tmp_path, capsys):
    plot = tmp_path / "out" / "loss.png"
    assert example.main([*SMALL, "--steps", "40", "--sample", "50", "--plot", str(plot)]) == 0
    out, err = capsys.readouterr()
    assert "40/40" in err and "tokens/s=" in err and "loss=" in err and "final loss" in err  # tqdm's bar
    final = float(err.split("final loss ")[1].split()[0])
    assert final < 3.4  # from log(66) = 4.19 at the start
    sample = out.strip("\n")
    assert len(sample) >= 40 and set(sample) <= set(open(example.TEXT, encoding="utf-8").read())
    assert_matplotlib_png(plot)


def test_smoothed_is_a_bias_corrected_moving_average():
    assert example.smoothed([3.0] * 5) == pytest.approx([3.0] * 5)  # no pull towards 0 at the start
    values = [4.0, 2.0, 3.0, 1.0]
    expected = [sum(0.1 * 0.9 ** (n - i) * values[i] for i in range(n + 1)) / (1 - 0.9 ** (n + 1))
                for n in range(len(values))]
    assert example.smoothed(values) == pytest.approx(expected)


def test_plot_has_labels_title_and_both_curves(tmp_path):
    losses = [4.0 - 2.0 * i / 99 + 0.3 * (-1) ** i for i in range(100)]
    plot = tmp_path / "loss.png"
    figure = example.plot_losses(losses, str(plot), title="the title")
    (axes,) = figure.axes
    assert (axes.get_title(), axes.get_xlabel()) == ("the title", "step")
    assert axes.get_ylabel().startswith("loss")
    raw, smooth = axes.get_lines()
    assert list(raw.get_xdata()) == list(range(1, 101)) and list(raw.get_ydata()) == losses
    assert list(smooth.get_ydata()) == pytest.approx(example.smoothed(losses))
    assert [t.get_text() for t in axes.get_legend().get_texts()] == [raw.get_label(), smooth.get_label()]
    assert_matplotlib_png(plot)
    # both curves were drawn into the file, each in its colour (the legend's samples are
    # a few dozen pixels)
    from matplotlib.colors import to_rgb
    from matplotlib.image import imread
    pixels = imread(plot)[..., :3]
    for line in (raw, smooth):
        assert (np.abs(pixels - to_rgb(line.get_color())).max(axis=-1) < 0.02).sum() > 500, line.get_label()


def test_steps_must_be_positive():
    with pytest.raises(SystemExit):
        example.main(["--steps", "0"])


def test_same_training_as_torch():
    """The example's model and step under ember and torch, started from the same weights:
    the same loss, gradients and updated weights (dropout off). SGD rather than the
    example's AdamW: Adam scales the float noise of a zero gradient (the key bias's, which
    softmax ignores) up to a full step, so its weights differ in that noise."""
    torch = pytest.importorskip("torch")
    nets = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        text = example.Text(lib)
        nets[lib] = example.make_model_class(lib)(len(text.chars), 16, dim=32, layers=2, heads=4, dropout=0.0)
    state = {k: ember.tensor(v.detach().numpy()) for k, v in nets[torch].state_dict().items()}
    nets[ember].load_state_dict(state)
    data = example.Text(torch).data[:200].numpy()
    windows = np.arange(8)[:, None] * 20 + np.arange(16)
    losses, grads = {}, {}
    for lib, net in nets.items():
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            logits, loss = net(lib.tensor(data[windows]), lib.tensor(data[windows + 1]))
            opt.zero_grad()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        losses[lib] = loss.item()
        grads[lib] = {k: p.grad.detach().numpy() for k, p in net.named_parameters()}
    assert losses[ember] == pytest.approx(losses[torch], rel=1e-4)
    assert grads[ember].keys() == grads[torch].keys()
    for k in grads[torch]:
        np.testing.assert_allclose(grads[ember][k], grads[torch][k], rtol=1e-3, atol=1e-5, err_msg=k)
    for (k, a), b in zip(nets[ember].state_dict().items(), nets[torch].state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
