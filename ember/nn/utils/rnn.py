"""Variable-length sequences for the recurrent layers: padding, and packing (the steps of
a batch of sequences sorted by decreasing length, concatenated time step by time step)."""
from __future__ import annotations

from collections import namedtuple
from typing import Iterable, List, Optional, Union

from ... import _C

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


def invert_permutation(permutation):
    """The permutation q with q[p[i]] = i (None for None).

    >>> ember.nn.utils.rnn.invert_permutation(ember.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    out = _C.empty_like(permutation)
    return out.scatter_(0, permutation, _C.arange(permutation.numel(), dtype=permutation.dtype,
                                                       device=permutation.device))


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch: data (sum of lengths, *) holds time step 0 of every sequence, then
    step 1 of those at least 2 long, ...; batch_sizes (int64) says how many sequences each
    step has. sorted_indices orders the original batch by decreasing length
    (unsorted_indices undoes it); None when the batch was already sorted.

    >>> packed = ember.nn.utils.rnn.pack_sequence([ember.tensor([1., 2.]), ember.tensor([3.])])
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1.0, 3.0, 2.0], [2, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as from older code
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data) -> "PackedSequence":
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """data converted as Tensor.to; the indices follow to the new device only."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = self.sorted_indices.to(device) if self.sorted_indices is not None else None
        unsorted_indices = self.unsorted_indices.to(device) if self.unsorted_indices is not None else None
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args, **kwargs) -> "PackedSequence":
        return self.to("cpu")

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        return self.to("cuda", *args, **kwargs)

    def double(self) -> "PackedSequence":
        return self._with_data(self.data.double())

    def float(self) -> "PackedSequence":
        return self._with_data(self.data.float())

    def half(self) -> "PackedSequence":
        return self._with_data(self.data.half())

    def bfloat16(self) -> "PackedSequence":
        return self._with_data(self.data.bfloat16())

    def long(self) -> "PackedSequence":
        return self._with_data(self.data.long())

    def int(self) -> "PackedSequence":
        return self._with_data(self.data.int())

    def short(self) -> "PackedSequence":
        return self._with_data(self.data.short())

    def char(self) -> "PackedSequence":
        return self._with_data(self.data.char())

    def byte(self) -> "PackedSequence":
        return self._with_data(self.data.byte())

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _lengths_list(lengths) -> List[int]:
    if isinstance(lengths, _C.TensorBase):
        return [int(n) for n in lengths.to(_C.int64).tolist()]
    return [int(n) for n in lengths]


def _batch_sizes(lengths: List[int]) -> List[int]:
    """For lengths sorted in decreasing order: how many sequences are alive at each step."""
    sizes, alive = [], len(lengths)
    for t in range(lengths[0] if lengths else 0):
        while alive and lengths[alive - 1] <= t:
            alive -= 1
        sizes.append(alive)
    return sizes


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch (T, B, *) ((B, T, *) with batch_first) of sequences of the given
    lengths. With enforce_sorted, lengths must be in decreasing order; else the batch is
    sorted first and the permutation kept in the result.

    >>> x = ember.tensor([[1., 2.], [3., 0.]])  # (T=2, B=2): lengths 2 and 1
    >>> ember.nn.utils.rnn.pack_padded_sequence(x, [2, 1]).data.tolist()
    [1.0, 2.0, 3.0]
    """
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = _C.tensor(order, dtype=_C.int64, device=input.device)
        lengths = [lengths[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    if len(lengths) != input.size(batch_dim):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.size(batch_dim)})")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
                           "<= 0")
    if lengths[0] > input.size(1 - batch_dim):
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths[0]} is longer than the input's "
                           f"{input.size(1 - batch_dim)} time steps")
    if batch_first:
        input = input.transpose(0, 1)  # (B, T, *) -> (T, B, *)
    sizes = _batch_sizes(lengths)
    data = _C.cat([input[t, :n] for t, n in enumerate(sizes)])
    return PackedSequence(data, _C.tensor(sizes, dtype=_C.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None):
    """Undoes pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths int64 (B,)),
    in the original batch order, padded with padding_value to the longest sequence or
    total_length steps.

    >>> packed = ember.nn.utils.rnn.pack_sequence([ember.tensor([1., 2.]), ember.tensor([3.])])
    >>> padded, lengths = ember.nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 2.0], [3.0, 0.0]], [2, 1])
    """
    data, sizes = sequence.data, [int(n) for n in sequence.batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
    else:
        total_length = steps
    batch = sizes[0] if sizes else 0
    tail = tuple(data.shape[1:])
    rows, offset = [], 0
    for n in sizes:
        step = data[offset:offset + n]
        offset += n
        if n < batch:
            step = _C.cat([step, data.new_full((batch - n, *tail), padding_value)])
        rows.append(step)
    for _ in range(total_length - steps):
        rows.append(data.new_full((batch, *tail), padding_value))
    padded = _C.stack(rows, 1 if batch_first else 0)
    lengths = [sum(1 for n in sizes if n > b) for b in range(batch)]
    lengths = _C.tensor(lengths, dtype=_C.int64)  # on the CPU, as batch_sizes (torch's)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    return padded, lengths


def pad_sequence(sequences: Union[Iterable, object], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stacks sequences (L_i, *) into (max L, B, *) ((B, max L, *) with batch_first),
    padding each with padding_value after its end (padding_side='right') or before its
    start ('left').

    >>> ember.nn.utils.rnn.pad_sequence([ember.tensor([1., 2.]), ember.tensor([3.])], batch_first=True).tolist()
    [[1.0, 2.0], [3.0, 0.0]]
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, _C.TensorBase):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.size(0)
        if missing:
            fill = s.new_full((missing, *s.shape[1:]), padding_value)
            s = _C.cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return _C.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """Undoes pad_sequence: the list of sequences padded_sequences[:lengths[i], i].

    >>> padded = ember.tensor([[1., 3.], [2., 0.]])
    >>> [s.tolist() for s in ember.nn.utils.rnn.unpad_sequence(padded, ember.tensor([2, 1]))]
    [[1.0, 2.0], [3.0]]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)  # (T, B, *) -> (B, T, *)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of sequences (L_i, *) (sorted by decreasing length unless
    enforce_sorted=False)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """Undoes pack_sequence: the list of sequences, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
