"""ember.stft / ember.istft (and Tensor.stft / istft): torch's short-time Fourier transform
and its inverse, composed of ember ops: frames as a strided view of the (centered,
padded) signal, times the window (zero-padded to n_fft in the middle), one batched
transform (_fft_r2c one-sided, or _fft_c2c); istft inverts each frame (_fft_c2r or
_fft_c2c), overlap-adds them with index_add and divides by the summed squared window."""
from __future__ import annotations

import warnings

import ember
from . import _autocast


def _window(window, win_length, n_fft, dtype, name):
    if window is None:
        w = ember.ones(win_length, dtype=dtype)
    else:
        if window.dim() != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, "
                               f"but got window with size {list(window.shape)}")
        w = window
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = ember.cat([ember.zeros(left, dtype=w.dtype), w, ember.zeros(n_fft - win_length - left, dtype=w.dtype)])
    return w


@_autocast.fp32
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: (freq, frames) or (batch, freq, frames)."""
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                      "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                      "Note: you can still call torch.view_as_real on the complex output to recover the old "
                      "return format.", UserWarning, stacklevel=2)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("stft: expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError("stft: expected a 1D or 2D tensor")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if center:
        nd = input.dim()
        pad = n_fft // 2
        input = ember.nn.functional.pad(input.view([1] * (3 - nd) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(input.shape[-nd:])
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    length = x.shape[1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    n_frames = 1 + (length - n_fft) // hop_length
    s0, s1 = x.stride()
    frames = x.as_strided((x.shape[0], n_frames, n_fft), (s0, hop_length * s1, s1), x.storage_offset())
    w = _window(window, win_length, n_fft, x.dtype if not x.dtype.is_complex else ember.float32, "stft")
    frames = frames * w
    norm = 1 if normalized else 0
    if frames.dtype.is_complex:
        out = ember._fft_c2c(frames, [2], norm, True)
    else:
        out = ember._fft_r2c(frames, [2], norm, onesided)
    out = out.transpose(1, 2)
    if not batched:
        out = out.squeeze(0)
    return out if return_complex else ember.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: overlap-added inverse transforms of the frames, divided by the
    summed squared window."""
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.dim()}")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    n_freq, n_frames = x.shape[1], x.shape[2]
    onesided = (n_freq != n_fft) if onesided is None else onesided
    if onesided:
        if n_freq != n_fft // 2 + 1:
            raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                               "match n_fft / 2 + 1 when onesided=True, but got " + str(n_freq))
    elif n_freq != n_fft:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {n_freq}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    real_dtype = ember.float64 if x.dtype == ember.complex128 else ember.float32
    w = _window(window, win_length, n_fft, real_dtype, "istft")
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
    elif w.dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    norm = 1 if normalized else 2
    frames = x.transpose(1, 2)  # (batch, frames, freq)
    if return_complex:
        frames = ember._fft_c2c(frames, [2], norm, False)
    elif onesided:
        frames = ember._fft_c2r(frames, [2], norm, n_fft)
    else:
        frames = ember._fft_c2c(frames, [2], norm, False).real
    frames = frames * w
    expected = n_fft + hop_length * (n_frames - 1)
    positions = (ember.arange(n_frames) * hop_length).unsqueeze(1) + ember.arange(n_fft).unsqueeze(0)
    positions = positions.reshape(-1)
    y = ember.zeros(x.shape[0], expected, dtype=frames.dtype).index_add(1, positions,
                                                                         frames.reshape(x.shape[0], -1))
    env = ember.zeros(expected, dtype=real_dtype).index_add(0, positions, (w.abs() ** 2).repeat(n_frames))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    y = y[:, start:end]
    env = env[start:end]
    if env.numel() and float(env.abs().min()) < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: {float(env.abs().min()):g}")
    y = y / env
    if length is not None and y.shape[1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with "
                      "zeros in the tail. Please check your center and hop_length settings.", UserWarning,
                      stacklevel=2)
        y = ember.cat([y, ember.zeros(y.shape[0], length - y.shape[1], dtype=y.dtype)], 1)
    return y if batched else y.squeeze(0)
