"""Bad inputs give a Python exception of torch's type, and never crash the interpreter.

Most cases run in-process through check(): torch's exception type is the expected one.
Cases that could take the process down (huge sizes, overflowing strides, recursive data)
run ember in a fresh interpreter, so a crash fails one test instead of the whole run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest

from helpers import DTYPE_NAMES, check, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# All the isolated cases run in one child interpreter, one after the other; when the child
# dies, the case it was running is recorded as a crash and a new child goes on after it.
_RUNNER = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("ignore")
    import ember as lib
    for i, code in enumerate(json.load(sys.stdin)):
        print("START", i, flush=True)
        try:
            exec(compile(code, "<case>", "exec"), {"lib": lib})
            outcome = "OK"
        except Exception as e:
            outcome = type(e).__name__
        print("END", i, outcome, flush=True)
""")
_ISOLATED: dict[str, str] = {}  # code -> outcome, filled on first use
_ALL_CODES: list[str] = []  # every isolated case of this file, registered at import


def _run_children(codes: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    while codes:
        proc = subprocess.Popen([sys.executable, "-c", _RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        try:
            stdout, stderr = proc.communicate(json.dumps(codes), timeout=300)
            why = f"crashed (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            why = "timed out"
        started = None
        for line in stdout.splitlines():
            parts = line.split()
            if parts[:1] == ["START"]:
                started = int(parts[1])
            elif parts[:1] == ["END"]:
                out[codes[int(parts[1])]] = parts[2]
                started = None
        if proc.returncode == 0 and started is None:
            break
        if started is None:  # died before the first case: nothing to blame on a case
            raise RuntimeError(f"the ember child interpreter {why}:\n{stderr[-2000:]}")
        out[codes[started]] = f"CRASH: {why}: {stderr[-1500:]}"
        codes = codes[started + 1:]
    return out


def ember_outcome(code: str) -> str:
    """'OK' or the exception's type name for `code` (which uses `lib`) with lib = ember, run
    in a child interpreter; fails the test when the interpreter dies."""
    if code not in _ISOLATED:
        todo = [c for c in dict.fromkeys(_ALL_CODES + [code]) if c not in _ISOLATED]
        _ISOLATED.update(_run_children(todo))
    got = _ISOLATED[code]
    assert not got.startswith("CRASH"), f"ember {got.splitlines()[0]} on: {code!r}\n{got}"
    return got


def torch_outcome(code: str) -> str:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, "<case>", "exec"), {"lib": torch})
        return "OK"
    except Exception as e:
        return type(e).__name__


def check_isolated(code: str, expected: str | None = None):
    """ember, run apart, ends like torch (or like `expected`; "any error": any exception)."""
    got = ember_outcome(code)
    if expected == "any error":
        assert got != "OK", f"ember raised nothing for: {code!r}"
        return
    want = expected if expected is not None else torch_outcome(code)
    assert got == want, f"ember: {got}, torch: {want}, for: {code!r}"


# ----------------------------------------------------------------- wrong argument types
WRONG_TYPES = {
    "zeros_str": lambda lib: lib.zeros("a"),
    "zeros_none": lambda lib: lib.zeros(None),
    "zeros_float": lambda lib: lib.zeros(2.5),
    "zeros_float_in_tuple": lambda lib: lib.zeros((2, 3.0)),
    "zeros_float_second": lambda lib: lib.zeros(2, 3.0),
    "zeros_nested_list": lambda lib: lib.zeros([2, [3]]),
    "zeros_bool": lambda lib: lib.zeros(True),
    "zeros_float_tensor": lambda lib: lib.zeros(lib.tensor(3.0)),
    "zeros_int_tensor_1d": lambda lib: lib.zeros(lib.tensor([3])),
    "zeros_dtype_str": lambda lib: lib.zeros(2, dtype="float32"),
    "zeros_dtype_int": lambda lib: lib.zeros(2, dtype=5),
    "zeros_layout_int": lambda lib: lib.zeros(2, layout=5),
    "ones_str": lambda lib: lib.ones("a"),
    "empty_object": lambda lib: lib.empty(object()),
    "full_str_value": lambda lib: lib.full((2,), "a"),
    "full_str_size": lambda lib: lib.full("a", 1.0),
    "full_none_value": lambda lib: lib.full((2,), None),
    "arange_str": lambda lib: lib.arange("a"),
    "tensor_dtype_int": lambda lib: lib.tensor(1, dtype=1),
    "tensor_dtype_str": lambda lib: lib.tensor(1, dtype="float32"),
    "view_str": lambda lib: lib.zeros(2, 3).view("a"),
    "view_none": lambda lib: lib.zeros(2, 3).view(None),
    "view_float": lambda lib: lib.zeros(2, 3).view(6.0),
    "view_list_with_str": lambda lib: lib.zeros(2, 3).view([2, "a"]),
    "view_tensor": lambda lib: lib.zeros(2, 3).view(lib.zeros(3)),
    "view_no_args": lambda lib: lib.zeros(2, 3).view(),
    "view_size_and_dtype": lambda lib: lib.zeros(2, 2).view(4, dtype=lib.int8),
    "reshape_str": lambda lib: lib.zeros(2, 3).reshape("a"),
    "reshape_float": lambda lib: lib.zeros(2, 3).reshape(6.0),
    "transpose_str": lambda lib: lib.zeros(2, 3).transpose("a", 0),
    "transpose_none": lambda lib: lib.zeros(2, 3).transpose(0, None),
    "transpose_one_arg": lambda lib: lib.zeros(2, 3).transpose(0),
    "permute_str": lambda lib: lib.zeros(2, 3).permute("a"),
    "permute_float": lambda lib: lib.zeros(2, 3).permute(1.0, 0),
    "expand_str": lambda lib: lib.zeros(2, 3).expand("a"),
    "expand_float": lambda lib: lib.zeros(1, 3).expand(2.0, 3),
    "narrow_str": lambda lib: lib.zeros(2, 3).narrow("a", 0, 1),
    "narrow_float_start": lambda lib: lib.zeros(2, 3).narrow(0, 1.5, 1),
    "narrow_two_args": lambda lib: lib.zeros(2, 3).narrow(0, 1),
    "select_str": lambda lib: lib.zeros(2, 3).select(0, "a"),
    "select_float": lambda lib: lib.zeros(2, 3).select(0, 1.5),
    "select_one_arg": lambda lib: lib.zeros(2, 3).select(0),
    "unfold_str": lambda lib: lib.zeros(5).unfold(0, "a", 1),
    "unfold_two_args": lambda lib: lib.zeros(5).unfold(0, 1),
    "size_str": lambda lib: lib.zeros(2, 3).size("a"),
    "stride_float": lambda lib: lib.zeros(2, 3).stride(1.5),
    "squeeze_str": lambda lib: lib.zeros(2, 3).squeeze("a"),
    "unsqueeze_none": lambda lib: lib.zeros(2, 3).unsqueeze(None),
    "flatten_str": lambda lib: lib.zeros(2, 3).flatten("a"),
    "split_str": lambda lib: lib.zeros(2, 3).split("a"),
    "split_float": lambda lib: lib.zeros(2, 3).split(1.5),
    "chunk_float": lambda lib: lib.zeros(2, 3).chunk(1.5),
    "diagonal_str": lambda lib: lib.zeros(2, 3).diagonal("a"),
    "movedim_str": lambda lib: lib.zeros(2, 3).movedim("a", 0),
    "as_strided_str_size": lambda lib: lib.zeros(4).as_strided("a", (1,)),
    "as_strided_str_stride": lambda lib: lib.zeros(4).as_strided((2,), "a"),
    "as_strided_float_offset": lambda lib: lib.zeros(4).as_strided((2,), (1,), 1.5),
    "fill_str": lambda lib: lib.zeros(3).fill_("a"),
    "fill_none": lambda lib: lib.zeros(3).fill_(None),
    "fill_list": lambda lib: lib.zeros(3).fill_([1]),
    "fill_complex": lambda lib: lib.zeros(3).fill_(1j),
    "copy_none": lambda lib: lib.zeros(3).copy_(None),
    "copy_list": lambda lib: lib.zeros(3).copy_([1, 2, 3]),
    "copy_number": lambda lib: lib.zeros(3).copy_(5),
    "contiguous_bad_format": lambda lib: lib.zeros(3).contiguous(memory_format=5),
    "clone_bad_format": lambda lib: lib.zeros(3).clone(memory_format="a"),
    "to_str": lambda lib: lib.zeros(3).to("not a device"),
    "to_none": lambda lib: lib.zeros(3).to(None),
    "to_two_dtypes": lambda lib: lib.zeros(3).to(lib.float64, lib.float32),
    "tolist_arg": lambda lib: lib.zeros(3).tolist(1),
    "item_arg": lambda lib: lib.zeros(()).item(1),
    "nonzero_positional": lambda lib: lib.zeros(3).nonzero(5),
    "index_put_not_tuple": lambda lib: lib.zeros(3).index_put_(lib.tensor([0]), lib.tensor(1.0)),
    "index_put_number": lambda lib: lib.zeros(3).index_put_((lib.tensor([0]),), 1.0),
    "index_put_none_index": lambda lib: lib.zeros(3).index_put_((None,), lib.tensor(1.0)),
    "size_object": lambda lib: lib.Size([1, "a"]),
    "from_numpy_list": lambda lib: lib.from_numpy([1]),
    "set_default_dtype_int": lambda lib: lib.set_default_dtype(lib.int32),
    "method_on_non_tensor": lambda lib: lib.Tensor.transpose(object(), 0, 1),
    "method_on_int": lambda lib: lib.Tensor.view(5, 2),
    "getitem_on_int": lambda lib: lib.Tensor.__getitem__(5, 0),
}


# Known differences, each with its reason.
NUMBERS_AS_TENSORS = ("copy_(5) and zeros(tensor([3])): the parser does not yet turn numbers and one-element "
                      "tensors into the other kind where torch does; comes with the operator library's parser "
                      "work (issue 3)")
WRONG_TYPES_XFAIL = {"copy_number": NUMBERS_AS_TENSORS, "zeros_int_tensor_1d": NUMBERS_AS_TENSORS}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_wrong_argument_types(case, request):
    if case in WRONG_TYPES_XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=WRONG_TYPES_XFAIL[case]))
    check(WRONG_TYPES[case])


# ------------------------------------------------------------------ unexpected keywords
UNEXPECTED_KEYWORDS = {
    "zeros": lambda lib: lib.zeros(2, foo=1),
    "ones": lambda lib: lib.ones(2, bar=None),
    "empty": lambda lib: lib.empty(2, sizes=3),
    "tensor": lambda lib: lib.tensor([1], foo=1),
    "full": lambda lib: lib.full((2,), 1.0, value=2),
    "arange": lambda lib: lib.arange(3, stop=5, foo=1),
    "view": lambda lib: lib.zeros(2, 3).view(6, foo=1),
    "view_kw_only": lambda lib: lib.zeros(2, 3).view(shape=(6,)),
    "reshape": lambda lib: lib.zeros(2, 3).reshape((6,), foo=1),
    "transpose": lambda lib: lib.zeros(2, 3).transpose(0, 1, foo=1),
    "transpose_wrong_name": lambda lib: lib.zeros(2, 3).transpose(dim0=0, dimension=1),
    "permute": lambda lib: lib.zeros(2, 3).permute(1, 0, foo=1),
    "flatten_fn": lambda lib: lib.flatten(lib.zeros(2, 3), foo=1),
    "flatten_method": lambda lib: lib.zeros(2, 3).flatten(start=0),
    "expand": lambda lib: lib.zeros(1, 3).expand(2, 3, foo=1),
    "squeeze": lambda lib: lib.zeros(1, 3).squeeze(dims=0),
    "unsqueeze": lambda lib: lib.zeros(3).unsqueeze(axis=0),
    "narrow": lambda lib: lib.zeros(3).narrow(0, 0, 1, foo=1),
    "select": lambda lib: lib.zeros(3).select(0, index=0, foo=1),
    "split": lambda lib: lib.zeros(3).split(1, axis=0),
    "chunk": lambda lib: lib.zeros(3).chunk(chunk=1),
    "unbind": lambda lib: lib.zeros(3).unbind(axis=0),
    "diagonal": lambda lib: lib.zeros(3, 3).diagonal(off=1),
    "fill_": lambda lib: lib.zeros(3).fill_(1, foo=2),
    "copy_": lambda lib: lib.zeros(3).copy_(lib.zeros(3), foo=1),
    "clone": lambda lib: lib.zeros(3).clone(foo=1),
    "contiguous": lambda lib: lib.zeros(3).contiguous(foo=1),
    "size": lambda lib: lib.zeros(3).size(foo=0),
    "stride": lambda lib: lib.zeros(3).stride(axis=0),
    "as_strided": lambda lib: lib.zeros(3).as_strided((1,), (1,), offset=0),
    "unfold": lambda lib: lib.zeros(3).unfold(0, 1, 1, foo=1),
    "nonzero": lambda lib: lib.zeros(3).nonzero(foo=True),
    "movedim": lambda lib: lib.zeros(3, 2).movedim(src=0, dst=1),
    "index_put_": lambda lib: lib.zeros(3).index_put_((lib.tensor([0]),), lib.tensor(1.0), acc=True),
    "item": lambda lib: lib.zeros(()).item(foo=1),
    "to": lambda lib: lib.zeros(3).to(lib.float64, foo=1),
    "duplicate_positional_and_keyword": lambda lib: lib.zeros(2, 3).transpose(0, 1, dim0=0),
}


@pytest.mark.parametrize("case", sorted(UNEXPECTED_KEYWORDS))
def test_unexpected_keywords(case):
    check(UNEXPECTED_KEYWORDS[case])


# --------------------------------------------------------------- negative / huge sizes
SIZES = {
    "zeros_neg": "lib.zeros(-1)",
    "zeros_neg_second": "lib.zeros(2, -1)",
    "zeros_neg_tuple": "lib.zeros((3, -2))",
    "zeros_min_int64": "lib.zeros(-2**63)",
    "empty_neg": "lib.empty(-5)",
    "ones_neg": "lib.ones((-1,))",
    "full_neg": "lib.full((-1,), 1.0)",
    "rand_neg": "lib.rand(-1)",
    "randn_neg": "lib.randn(2, -3)",
    "empty_strided_neg": "lib.empty_strided((-1,), (1,))",
    "zeros_overflow_2d": "lib.zeros(2**62, 2**62)",
    "empty_overflow_2d": "lib.empty(2**40, 2**40)",
    "empty_overflow_bytes": "lib.empty(2**62)",
    "empty_max_int64": "lib.empty(2**63 - 1)",
    "zeros_overflow_3d": "lib.zeros((2**31, 2**31, 2**31))",
    "empty_overflow_with_itemsize": "lib.empty(2**31, 2**31, 4, dtype=lib.float64)",
    "ones_overflow_bytes": "lib.ones(2**61, dtype=lib.float64)",
    "full_overflow": "lib.full((2**40, 2**40), 1.0)",
    "arange_overflow": "lib.arange(2**62)",
    "linspace_overflow": "lib.linspace(0, 1, 2**62)",
    "randn_overflow": "lib.randn(2**62)",
    "randperm_overflow": "lib.randperm(2**62)",
    "randint_overflow": "lib.randint(5, (2**62,))",
    "empty_strided_overflow": "lib.empty_strided((2, 2), (2**62, 1))",
    "empty_strided_overflow_sizes": "lib.empty_strided((2**31, 2**31), (2**31, 1))",
    "empty_too_large_to_allocate": "lib.empty(2**50)",
    "zeros_too_large_to_allocate": "lib.zeros(2**48, dtype=lib.uint8)",
    "storage_too_large": "lib.UntypedStorage(2**62)",
    "storage_resize_too_large": "lib.zeros(3).untyped_storage().resize_(2**62)",
    "zeros_size_object_overflow": "lib.zeros(lib.Size([2**62, 4]))",
    "eye_overflow": "lib.eye(2**40)",
    "eye_overflow_2": "lib.eye(2**33, 2**33)",
}


@pytest.mark.parametrize("case", sorted(SIZES))
def test_negative_and_huge_sizes(case):
    """RuntimeError as torch (a size too large to allocate too): never a crash."""
    check_isolated(SIZES[case])


STATED_SIZES = ["lib.empty(2**50)", "lib.zeros(2**62, 2**62)", "lib.empty(2**40, 2**40)", "lib.zeros(-1)"]


@pytest.mark.parametrize("code", STATED_SIZES)
def test_huge_and_negative_sizes_are_runtime_errors(code):
    """The brief's exact cases, stated without torch: RuntimeError."""
    check_isolated(code, "RuntimeError")


INT64_OVERFLOW = {
    "zeros_2_70": "lib.zeros(2**70)",
    "zeros_2_63": "lib.zeros(2**63)",
    "zeros_2_70_in_tuple": "lib.zeros((2, 2**70))",
    "zeros_neg_2_70": "lib.zeros(-2**70)",
    "empty_2_64": "lib.empty(2**64)",
    "arange_2_70": "lib.arange(2**70)",
    "full_value_2_70": "lib.full((2,), 2**70)",
    "fill_2_70_int64": "lib.zeros(3, dtype=lib.int64).fill_(2**70)",
    "fill_2_1100_float": "lib.zeros(3).fill_(2**1100)",
    "fill_2_63_int64": "lib.zeros(3, dtype=lib.int64).fill_(2**63)",
    "view_2_70": "lib.zeros(6).view(2**70)",
    "view_2_63": "lib.zeros(6).view(2**63, -1)",
    "expand_2_70": "lib.zeros(1).expand(2**70)",
    "transpose_2_70": "lib.zeros(2, 3).transpose(0, 2**70)",
    "size_2_70": "lib.zeros(2, 3).size(2**70)",
    "narrow_start_2_70": "lib.zeros(3).narrow(0, 2**70, 1)",
    "select_2_70": "lib.zeros(3).select(0, 2**70)",
    "getitem_2_63": "lib.zeros(3)[2**63]",
    "getitem_list_2_63": "lib.zeros(3)[[2**63]]",
    "getitem_slice_2_70": "r = lib.zeros(3)[-2**70:2**70]",
    "getitem_step_2_70": "r = lib.zeros(3)[::2**70]",
    "getitem_step_max": "r = lib.zeros(3)[::2**63 - 1]",
    "getitem_step_max_len": "r = len(lib.zeros(3)[1::2**63 - 1])",
    "getitem_step_max_repr": "r = repr(lib.zeros(3)[::2**63 - 1])",
    "getitem_step_2_62": "r = lib.zeros(3)[::2**62].tolist()",
    "setitem_value_2_70": "x = lib.zeros(3)\nx[0] = 2**70",
    "as_strided_2_70": "lib.zeros(3).as_strided((1,), (2**70,))",
    "as_strided_offset_2_70": "lib.zeros(3).as_strided((1,), (1,), 2**70)",
    "unfold_2_70": "lib.zeros(3).unfold(0, 2**70, 1)",
    "split_2_70": "lib.zeros(3).split(2**70)",
    "tensor_2_64": "lib.tensor(2**64)",
    "tensor_list_2_63": "lib.tensor([2**63])",
    "tensor_min_minus_1": "lib.tensor(-2**63 - 1)",
    "manual_seed_2_70": "lib.manual_seed(2**70)",
}


@pytest.mark.parametrize("case", sorted(INT64_OVERFLOW))
def test_ints_too_large_for_int64(case):
    """Python ints beyond int64: torch's exception type (TypeError, ValueError,
    OverflowError or RuntimeError depending on the argument), never a wrapped value."""
    check_isolated(INT64_OVERFLOW[case])


# --------------------------------------------------------------- invalid view shapes
VIEW_SHAPES = {
    "wrong_numel": lambda lib: lib.zeros(2, 3).view(5),
    "wrong_numel_infer": lambda lib: lib.zeros(2, 3).view(-1, 4),
    "two_infers": lambda lib: lib.zeros(2, 3).view(-1, -1),
    "minus_two": lambda lib: lib.zeros(2, 3).view(2, -2),
    "zero_with_infer": lambda lib: lib.zeros(2, 3).view(0, -1),
    "empty_infer_ambiguous": lambda lib: lib.zeros(0, 3).view(-1, 0),
    "zero_size_from_nonempty": lambda lib: lib.zeros(2, 3).view(2, 3, -1, 0),
    "transposed": lambda lib: lib.zeros(2, 3).t().view(6),
    "stepped": lambda lib: lib.zeros(4, 6)[:, ::2].view(12),
    "expanded": lambda lib: lib.zeros(3, 1).expand(3, 4).view(12),
    "reshape_wrong_numel": lambda lib: lib.zeros(2, 3).reshape(4, -1),
    "reshape_two_infers": lambda lib: lib.zeros(2, 3).reshape(-1, -1),
    "view_as_wrong": lambda lib: lib.zeros(2, 3).view_as(lib.zeros(5)),
    "reshape_as_wrong": lambda lib: lib.zeros(2, 3).reshape_as(lib.zeros(7)),
    "unflatten_wrong": lambda lib: lib.zeros(3, 3).unflatten(0, (2, 2)),
    "unflatten_zero_infer": lambda lib: lib.zeros(3, 3).unflatten(0, (0, -1)),
    "unflatten_empty_sizes": lambda lib: lib.zeros(3, 3).unflatten(0, ()),
    "view_dtype_itemsize": lambda lib: lib.zeros(3).view(lib.float64),
    "view_dtype_transposed": lambda lib: lib.zeros(3, 2).t().view(lib.float64),
    "view_dtype_offset": lambda lib: lib.zeros(6)[1:].view(lib.float64),
    "view_dtype_zero_dim": lambda lib: lib.zeros((), dtype=lib.int8).view(lib.int32),
    "view_dtype_stepped": lambda lib: lib.zeros(8, dtype=lib.uint8)[::2].view(lib.int16),
}


@pytest.mark.parametrize("case", sorted(VIEW_SHAPES))
def test_invalid_view_shapes(case):
    check(VIEW_SHAPES[case])


# ------------------------------------------------------------------ out-of-range dims
DIMS = {
    "transpose": lambda lib: lib.zeros(2, 3).transpose(0, 5),
    "transpose_neg": lambda lib: lib.zeros(2, 3).transpose(-3, 0),
    "size": lambda lib: lib.zeros(2, 3).size(3),
    "size_neg": lambda lib: lib.zeros(2, 3).size(-3),
    "stride": lambda lib: lib.zeros(2, 3).stride(2),
    "squeeze": lambda lib: lib.zeros(2, 3).squeeze(3),
    "squeeze_tuple": lambda lib: lib.zeros(2, 3).squeeze((0, 2)),
    "squeeze_dup": lambda lib: lib.zeros(1, 3).squeeze((0, 0)),
    "unsqueeze": lambda lib: lib.zeros(2, 3).unsqueeze(4),
    "unsqueeze_neg": lambda lib: lib.zeros(2, 3).unsqueeze(-4),
    "permute_range": lambda lib: lib.zeros(2, 3).permute(0, 5),
    "permute_dup": lambda lib: lib.zeros(2, 3).permute(0, 0),
    "permute_count": lambda lib: lib.zeros(2, 3).permute(0),
    "flatten_end": lambda lib: lib.zeros(2, 3).flatten(0, 5),
    "flatten_order": lambda lib: lib.zeros(2, 3).flatten(1, 0),
    "movedim": lambda lib: lib.zeros(2, 3).movedim(0, 5),
    "movedim_dup": lambda lib: lib.zeros(2, 3, 4).movedim((0, 0), (1, 2)),
    "movedim_len": lambda lib: lib.zeros(2, 3).movedim((0, 1), (0,)),
    "narrow": lambda lib: lib.zeros(2, 3).narrow(5, 0, 1),
    "select": lambda lib: lib.zeros(2, 3).select(5, 0),
    "unfold": lambda lib: lib.zeros(2, 3).unfold(5, 1, 1),
    "unbind": lambda lib: lib.zeros(2, 3).unbind(2),
    "diagonal": lambda lib: lib.zeros(2, 3).diagonal(0, 0, 5),
    "diagonal_same": lambda lib: lib.zeros(2, 3).diagonal(0, 0, 0),
    "diagonal_1d": lambda lib: lib.zeros(3).diagonal(),
    "split": lambda lib: lib.zeros(2, 3).split(1, 5),
    "chunk": lambda lib: lib.zeros(2, 3).chunk(1, 5),
    "unflatten": lambda lib: lib.zeros(2, 3).unflatten(5, (1, 2)),
    "zero_dim_size": lambda lib: lib.zeros(()).size(0),
    "zero_dim_stride": lambda lib: lib.zeros(()).stride(0),
    "zero_dim_transpose": lambda lib: lib.zeros(()).transpose(0, 1),
    "zero_dim_unsqueeze": lambda lib: lib.zeros(()).unsqueeze(2),
    "zero_dim_select": lambda lib: lib.zeros(()).select(0, 0),
    "zero_dim_narrow": lambda lib: lib.zeros(()).narrow(0, 0, 1),
    "zero_dim_unbind": lambda lib: lib.zeros(()).unbind(),
    "zero_dim_split": lambda lib: lib.zeros(()).split(1),
    "zero_dim_chunk": lambda lib: lib.zeros(()).chunk(1),
    "zero_dim_diagonal": lambda lib: lib.zeros(()).diagonal(),
    "zero_dim_unflatten": lambda lib: lib.zeros(()).unflatten(0, (1,)),
    "zero_dim_movedim": lambda lib: lib.zeros(()).movedim(0, 1),
    "zero_dim_flatten": lambda lib: lib.zeros(()).flatten(0, 1),
}


@pytest.mark.parametrize("case", sorted(DIMS))
def test_out_of_range_dims(case):
    check(DIMS[case])


# ------------------------------------------------------- as_strided / unfold / narrow
STRIDED = {
    "past_end": "lib.zeros(12).as_strided((13,), (1,))",
    "past_end_2d": "lib.zeros(12).as_strided((4, 4), (4, 1))",
    "offset_past_end": "lib.zeros(12).as_strided((2,), (1,), 11)",
    "stride_past_end": "lib.zeros(12).as_strided((2,), (12,))",
    "view_offset_past_end": "lib.zeros(12)[1:].as_strided((12,), (1,))",
    "huge_size": "lib.zeros(10).as_strided((2**62,), (1,))",
    "huge_stride": "lib.zeros(10).as_strided((2,), (2**62,))",
    "huge_stride_3": "lib.zeros(10).as_strided((3,), (2**62,))",
    "size_stride_product_overflows": "lib.zeros(10).as_strided((2**32, 2**32), (2**32, 1))",
    "max_stride": "lib.zeros(10).as_strided((2, 2), (2**63 - 1, 1))",
    "huge_offset": "lib.zeros(10).as_strided((2,), (1,), 2**62)",
    "max_offset": "lib.zeros(10).as_strided((2,), (1,), 2**63 - 1)",
    "negative_offset": "lib.zeros(10).as_strided((2,), (1,), -1)",
    "negative_size": "lib.zeros(10).as_strided((-1,), (1,))",
    "negative_stride": "lib.zeros(10).as_strided((2,), (-1,))",
    "min_stride": "lib.zeros(10).as_strided((2,), (-2**63,))",
    "rank_mismatch": "lib.zeros(10).as_strided((2, 2), (1,))",
    "empty_strided_rank_mismatch": "lib.empty_strided((2,), (1, 1))",
    "empty_strided_negative_stride": "lib.empty_strided((2, 2), (-1, 1))",
    "set_huge_size": "lib.zeros(2).set_(lib.zeros(2).untyped_storage(), 0, (2**62,), (1,))",
    "set_huge_offset": "lib.zeros(2).set_(lib.zeros(2).untyped_storage(), 2**62, (1,), (1,))",
    "set_huge_stride": "lib.zeros(2).set_(lib.zeros(2).untyped_storage(), 0, (2,), (2**62,))",
    "unfold_size_too_big": "lib.zeros(10).unfold(0, 11, 1)",
    "unfold_size_huge": "lib.zeros(10).unfold(0, 2**62, 1)",
    "unfold_step_zero": "lib.zeros(10).unfold(0, 2, 0)",
    "unfold_size_and_step_zero": "lib.zeros(10).unfold(0, 0, 0)",
    "unfold_step_negative": "lib.zeros(10).unfold(0, 2, -1)",
    "unfold_size_negative": "lib.zeros(10).unfold(0, -1, 1)",
    "unfold_dim": "lib.zeros(10).unfold(1, 1, 1)",
    "unfold_zero_dim_size_2": "lib.zeros(()).unfold(0, 2, 1)",
    "unfold_step_huge": "r = lib.zeros(10).unfold(0, 2, 2**62)",
    "narrow_start_huge": "lib.zeros(10).narrow(0, 2**62, 2)",
    "narrow_length_huge": "lib.zeros(10).narrow(0, 2, 2**62)",
    "narrow_start_very_negative": "lib.zeros(10).narrow(0, -2**62, 2)",
    "narrow_length_negative": "lib.zeros(10).narrow(0, 5, -1)",
    "narrow_past_end": "lib.zeros(10).narrow(0, 8, 3)",
    "select_huge": "lib.zeros(10).select(0, 2**62)",
    "select_min": "lib.zeros(10).select(0, -2**63)",
    "split_negative": "lib.zeros(10).split(-1)",
    "split_sizes_wrong_sum": "lib.zeros(10).split([3, 3])",
    "split_sizes_negative": "lib.zeros(10).split([11, -1])",
    "chunk_zero": "lib.zeros(10).chunk(0)",
    "chunk_negative": "lib.zeros(10).chunk(-1)",
    "diagonal_huge_offset": "r = lib.zeros(3, 3).diagonal(2**62)",
    "diagonal_min_offset": "r = lib.zeros(3, 3).diagonal(-2**63)",
}


@pytest.mark.parametrize("case", sorted(STRIDED))
def test_strided_views_out_of_bounds(case):
    check_isolated(STRIDED[case])


# ---------------------------------------------------------------- expand and numel overflow
EXPAND = {
    "incompatible": lambda lib: lib.zeros(2, 3).expand(3, 2),
    "fewer_dims": lambda lib: lib.zeros(2, 3).expand(3),
    "non_singleton": lambda lib: lib.zeros(2, 3).expand(4, 3),
    "trailing_mismatch": lambda lib: lib.zeros(2, 3).expand(2, 3, 4),
    "infer_new_dim": lambda lib: lib.zeros(2, 3).expand(-1, -1, -1),
    "minus_two": lambda lib: lib.zeros(2, 3).expand(2, -2),
    "negative_new_dim": lambda lib: lib.zeros(2, 3).expand(-2, 2, 3),
    "broadcast_to": lambda lib: lib.zeros(2, 3).broadcast_to((3, 3)),
    "expand_as": lambda lib: lib.zeros(2, 3).expand_as(lib.zeros(3)),
    "zero_to_one": lambda lib: lib.zeros(0, 3).expand(1, 3),
}


@pytest.mark.parametrize("case", sorted(EXPAND))
def test_expand_incompatible(case):
    check(EXPAND[case])


NUMEL_OVERFLOW = {
    "expand": "lib.zeros(2, 3).expand(2**62, 2**62, 2, 3)",
    "expand_1d": "lib.zeros(1).expand(2**62, 2**62)",
    "expand_wraps_to_small": "lib.zeros(1, 1).expand(2**62 + 3, 4)",
    "expand_then_contiguous": "lib.zeros(1, 1).expand(2**62, 2**62).contiguous()",
    "expand_then_clone": "lib.zeros(1, 1).expand(2**62, 2**62).clone()",
    "expand_then_reshape": "lib.zeros(1, 1).expand(2**40, 2**40).reshape(-1)",
    "expand_then_view": "lib.zeros(1, 1).expand(2**62 + 3, 4).view(-1)",
    "expand_then_flatten": "lib.zeros(1, 1).expand(2**40, 2**40).flatten()",
    "expand_then_nonzero": "lib.ones(1, 1).expand(2**62 + 3, 4).nonzero()",
    "expand_then_index": "lib.zeros(1, 1).expand(2**62 + 3, 4)[[0, 1]]",
    "expand_then_fill": "lib.zeros(1, 1).expand(2**62 + 3, 4).fill_(1)",
    "as_strided_wraps": "lib.zeros(4).as_strided((2**62 + 3, 4), (0, 1))",
    "broadcast_to": "lib.zeros(1).broadcast_to((2**62, 2**62))",
    "unsqueeze_expand": "lib.zeros(1).expand(2**63 - 1).unsqueeze(0).expand(2, -1)",
}


@pytest.mark.parametrize("case", sorted(NUMEL_OVERFLOW))
def test_numel_overflow(case):
    """torch refuses a shape whose element count overflows int64 (RuntimeError), even for
    stride-0 views that need no memory; ember must not wrap the count around."""
    check_isolated(NUMEL_OVERFLOW[case])


def test_expand_to_max_int64_elements_is_allowed():
    check(lambda lib: lib.zeros(1).expand(2**63 - 1).shape)
    check(lambda lib: lib.zeros(1).expand(2**63 - 1)[2**62].item())


# -------------------------------------------------------------------------- copy_
COPY = {
    "longer": lambda lib: lib.zeros(2).copy_(lib.zeros(3)),
    "transposed_shape": lambda lib: lib.zeros(2, 3).copy_(lib.zeros(3, 2)),
    "extra_trailing": lambda lib: lib.zeros(2, 3).copy_(lib.zeros(2, 3, 1)),
    "extra_leading_one": lambda lib: lib.zeros(2, 3).copy_(lib.zeros(1, 2, 3)),
    "extra_leading_two": lambda lib: lib.zeros(2, 3).copy_(lib.zeros(2, 2, 3)),
    "broadcast_row": lambda lib: lib.zeros(2, 3).copy_(lib.ones(3)),
    "broadcast_scalar_tensor": lambda lib: lib.zeros(2, 3).copy_(lib.tensor(4.0)),
    "empty_into_nonempty": lambda lib: lib.zeros(2).copy_(lib.zeros(0)),
    "into_empty": lambda lib: lib.zeros(0).copy_(lib.zeros(2)),
    "into_expanded": lambda lib: lib.zeros(1, 3).expand(2, 3).copy_(lib.ones(2, 3)),
    "into_zero_dim": lambda lib: lib.zeros(()).copy_(lib.ones(2)),
    "overlapping_self": lambda lib: lib.arange(9.0)[1:].copy_(lib.arange(9.0)[:-1]),
    "overlap_same_tensor": lambda lib: (lambda x: x[1:].copy_(x[:-1]))(lib.arange(9.0)),
    "partial_overlap_setitem": lambda lib: (lambda x: x.__setitem__((slice(None), 0), x[0]) or x)(lib.zeros(3, 3)),
}


@pytest.mark.parametrize("case", sorted(COPY))
def test_copy_from_non_broadcastable(case):
    check(COPY[case])


# ----------------------------------------------------------------- fill_ value overflow
@pytest.mark.parametrize("dtype,value", [
    ("uint8", 300), ("uint8", 256), ("uint8", 255), ("uint8", -1), ("uint8", -255), ("uint8", -256),
    ("uint8", 255.9), ("uint8", -0.5), ("int8", 200), ("int8", -129), ("int8", 127), ("int16", 70000),
    ("int32", 2**31), ("int32", -2**31), ("int32", 1e10), ("int64", 2**63 - 1), ("int64", -2**63),
    ("int64", 1e19), ("int8", float("nan")), ("int32", float("nan")), ("int64", float("inf")),
    ("uint8", float("-inf")), ("float16", 70000), ("float16", 65504), ("float16", 1e300), ("bfloat16", 1e300),
    ("bfloat16", 3e38), ("float32", 1e300), ("float32", float("inf")), ("float64", float("nan")),
    ("bool", 2), ("bool", -1), ("bool", 0.5), ("bool", float("nan")), ("float16", True), ("int8", True),
])
def test_fill_value_overflow(dtype, value):
    """fill_ / full / x[i] = v refuse a value outside the dtype's range (RuntimeError) the
    way torch does: negative ints wrap into unsigned dtypes, NaN can't become an integer."""
    check(lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)).fill_(value))
    check(lambda lib: lib.full((2,), value, dtype=getattr(lib, dtype)))

    def setitem(lib):
        x = lib.zeros(2, dtype=getattr(lib, dtype))
        x[0] = value
        return x

    check(setitem)


def test_fill_with_tensor_value():
    check(lambda lib: lib.zeros(3).fill_(lib.tensor(2.5)))
    check(lambda lib: lib.zeros(3, dtype=lib.int32).fill_(lib.tensor(2.5)))
    check(lambda lib: lib.zeros(3).fill_(lib.zeros(2)))
    check(lambda lib: lib.zeros(3).fill_(lib.zeros(1)))
    check(lambda lib: lib.zeros(3).fill_(lib.zeros(())[None][0]))


# ------------------------------------------------------------------- tensor() data errors
TENSOR_DATA = {
    "ragged": "lib.tensor([[1, 2], [3]])",
    "ragged_deep": "lib.tensor([[[1], [2]], [[3], [4, 5]]])",
    "ragged_scalar_list": "lib.tensor([[1, 2], 3])",
    "ragged_list_scalar": "lib.tensor([1, [2]])",
    "ragged_empty": "lib.tensor([[], [1]])",
    "str": "lib.tensor('abc')",
    "list_of_str": "lib.tensor(['a'])",
    "object": "lib.tensor([object()])",
    "bare_object": "lib.tensor(object())",
    "none": "lib.tensor(None)",
    "list_of_none": "lib.tensor([None])",
    "dict": "lib.tensor({})",
    "set": "lib.tensor({1, 2})",
    "bytes": "lib.tensor(b'ab')",
    "tensors_of_different_sizes": "lib.tensor([lib.zeros(2), lib.zeros(3)])",
    "multi_element_tensors": "lib.tensor([lib.zeros(2), lib.zeros(2)])",
    "int_overflow_uint8": "r = lib.tensor(300, dtype=lib.uint8)",
    "int_overflow_uint8_list": "r = lib.tensor([300], dtype=lib.uint8)",
    "float_overflow_half": "r = lib.tensor(1e300, dtype=lib.float16)",
    "nan_to_int": "r = lib.tensor(float('nan'), dtype=lib.int32)",
    "self_referencing_list": "l = []\nl.append(l)\nlib.tensor(l)",
    "self_referencing_list_with_item": "l = [1]\nl.append(l)\nlib.tensor(l)",
    "deeply_nested": "l = [0]\nfor _ in range(100000): l = [l]\nlib.tensor(l)",
    "deeply_nested_1000": "l = [0]\nfor _ in range(1000): l = [l]\nlib.tensor(l)",
    "deeply_nested_empty": "l = []\nfor _ in range(100000): l = [l]\nlib.tensor(l)",
    "self_referencing_as_tensor": "l = []\nl.append(l)\nlib.as_tensor(l)",
    "self_referencing_size": "l = []\nl.append(l)\nlib.zeros(l)",
    "self_referencing_index": "l = []\nl.append(l)\nlib.zeros(2)[l]",
    "self_referencing_setitem_value": "l = []\nl.append(l)\nx = lib.zeros(2)\nx[0] = l",
    "self_referencing_view": "l = []\nl.append(l)\nlib.zeros(2).view(l)",
    "len_lies_short": ("class L:\n    def __len__(self): return 5\n    def __getitem__(self, i): raise IndexError\n"
                       "lib.tensor(L())"),
    "getitem_raises": ("class L:\n    def __len__(self): return 3\n    def __getitem__(self, i): raise KeyError(i)\n"
                       "lib.tensor(L())"),
    "float_raises": "class F:\n    def __float__(self): raise ValueError('boom')\nlib.tensor([F()])",
    "index_raises_in_size": "class F:\n    def __index__(self): raise ValueError('boom')\nlib.zeros(F())",
    "index_too_big_in_size": "class F:\n    def __index__(self): return 2**70\nlib.zeros(F())",
    "index_raises_in_key": "class F:\n    def __index__(self): raise ValueError('boom')\nlib.zeros(3)[F()]",
    "index_raises_in_slice": "class F:\n    def __index__(self): raise ValueError('boom')\nlib.zeros(3)[:F()]",
    "index_raises_in_dim": ("class F:\n    def __index__(self): raise ValueError('boom')\n"
                            "lib.zeros(3, 3).transpose(F(), 0)"),
    "float_raises_in_fill": "class F:\n    def __float__(self): raise ValueError('boom')\nlib.zeros(3).fill_(F())",
}


# A user object whose __getitem__/__float__/__index__ raises: ember passes the user's own
# exception on; torch replaces it with one of its own types. Either is a clean Python
# exception (no crash, which the isolated run checks); matching torch's replacement
# types is left for later (issue 6, fuzzing of the Python boundary).
USER_EXCEPTION_CASES = {"float_raises", "float_raises_in_fill", "getitem_raises", "index_raises_in_dim",
                        "index_raises_in_key", "index_raises_in_size"}


@pytest.mark.parametrize("case", sorted(TENSOR_DATA))
def test_tensor_from_bad_data(case, request):
    if case in USER_EXCEPTION_CASES:
        request.applymarker(pytest.mark.xfail(strict=True, reason="ember re-raises the user's exception; torch "
                                              "raises its own type (issue 6)"))
    check_isolated(TENSOR_DATA[case])


# torch itself crashes on these (stack overflow): ember must raise something
TORCH_CRASHES = {
    "self_referencing_nested": "l = [[1]]\nl[0].append(l)\nlib.tensor(l)",
    "deep_index_list": "l = [0]\nfor _ in range(100000): l = [l]\nlib.zeros(3)[l]",
    "deep_index_tuple": "l = (0,)\nfor _ in range(100000): l = (l,)\nlib.zeros(3)[l]",
}


@pytest.mark.parametrize("case", sorted(TORCH_CRASHES))
def test_data_torch_crashes_on(case):
    check_isolated(TORCH_CRASHES[case], "any error")


STATED_DATA = [("lib.tensor([[1, 2], [3]])", "ValueError"), ("lib.tensor('abc')", "TypeError"),
               ("lib.tensor([object()])", "RuntimeError")]  # torch 2.13: "Could not infer dtype of object"


@pytest.mark.parametrize("code,exc", STATED_DATA)
def test_tensor_bad_data_types_stated(code, exc):
    """The brief's exact cases, stated without torch."""
    check_isolated(code, exc)


# ------------------------------------------------------- Python protocol conversions
CONVERSIONS = {
    "bool_many": lambda lib: bool(lib.zeros(2)),
    "bool_empty": lambda lib: bool(lib.zeros(0)),
    "float_many": lambda lib: float(lib.zeros(2)),
    "float_empty": lambda lib: float(lib.zeros(0)),
    "int_many": lambda lib: int(lib.zeros(2)),
    "int_empty": lambda lib: int(lib.zeros(0)),
    "complex_many": lambda lib: complex(lib.zeros(2)),
    "item_many": lambda lib: lib.zeros(2).item(),
    "item_empty": lambda lib: lib.zeros(0).item(),
    "len_zero_dim": lambda lib: len(lib.tensor(1.0)),
    "iter_zero_dim": lambda lib: iter(lib.tensor(1.0)),
    "list_zero_dim": lambda lib: list(lib.tensor(1.0)),
    "for_zero_dim": lambda lib: [v for v in lib.tensor(1.0)],
    "index_many": lambda lib: lib.zeros(2, dtype=lib.int64).__index__(),
    "index_float": lambda lib: lib.tensor(1.5).__index__(),
    "index_bool": lambda lib: lib.tensor(True).__index__(),
    "list_index_float_tensor": lambda lib: [1, 2, 3][lib.tensor(1.0)],
    "list_index_1d_tensor": lambda lib: [1, 2, 3][lib.tensor([1])],
    "range_float_tensor": lambda lib: range(lib.tensor(3.0)),
    "hex_float": lambda lib: hex(lib.tensor(5.0)),
    "delitem": lambda lib: lib.zeros(3).__delitem__(0),
    # and the conversions that work, as values
    "bool_one": lambda lib: (bool(lib.tensor([2])), bool(lib.tensor([[0.0]])), bool(lib.tensor(float("nan")))),
    "float_one": lambda lib: (float(lib.tensor([2])), float(lib.tensor([[1.5]], dtype=lib.float16))),
    "int_one": lambda lib: (int(lib.tensor(2.7)), int(lib.tensor([-2.7])), int(lib.tensor(True))),
    "len": lambda lib: (len(lib.zeros(3, 2)), len(lib.zeros(0, 2)), len(lib.zeros(1, 0))),
    "index_int": lambda lib: ([1, 2, 3][lib.tensor(1)], [1, 2, 3][lib.tensor([2])], hex(lib.tensor(255))),
    "int_nan": lambda lib: int(lib.tensor(float("nan"))),
    "int_inf": lambda lib: int(lib.tensor(float("inf"))),
    "iterate_1d": lambda lib: [v.item() for v in lib.tensor([1, 2, 3])],
}


@pytest.mark.parametrize("case", sorted(CONVERSIONS))
def test_python_conversions(case):
    check(CONVERSIONS[case])


# ------------------------------------------------ index_put_ / storage / generator errors
MISC = {
    "index_put_empty_indices": "x = lib.zeros(3)\nx.index_put_((), lib.tensor(1.))",
    "index_put_none_in_tuple": "x = lib.zeros(3, 3)\nx.index_put_((None, lib.tensor([0])), lib.tensor(1.))",
    "index_put_too_many": "x = lib.zeros(3)\nx.index_put_((lib.tensor([0]), None), lib.tensor(1.))",
    "index_put_bool_0dim": "x = lib.zeros(3, 3)\nr = x.index_put_((lib.tensor(True),), lib.tensor(1.))",
    "index_put_shape_mismatch": ("x = lib.zeros(3, 3)\n"
                                 "x.index_put_((lib.tensor([0, 1]), lib.tensor([0, 1, 2])), lib.tensor(1.))"),
    "index_put_value_overlaps_self": "x = lib.zeros(3, 3)\nx.index_put_((lib.tensor([0, 1, 2]),), x, accumulate=True)",
    "index_int8": "lib.zeros(3)[lib.tensor([-1], dtype=lib.int8)]",
    "index_int16": "lib.zeros(3)[lib.tensor([1], dtype=lib.int16)]",
    "storage_index": "lib.zeros(3).untyped_storage()[2**62]",
    "storage_resize_negative": "lib.zeros(3).untyped_storage().resize_(-1)",
    "storage_negative": "lib.UntypedStorage(-1)",
    "typed_storage_index": "lib.zeros(3).storage()[10]",
    "rng_state_wrong_size": "lib.set_rng_state(lib.zeros(3, dtype=lib.uint8))",
    "num_threads_zero": "lib.set_num_threads(0)",
    "randint_empty_range": "lib.randint(0, 0, (2,))",
    "arange_zero_step": "lib.arange(0, 10, 0)",
    "arange_wrong_sign": "lib.arange(0, 10, -1)",
    "arange_inf": "lib.arange(0, float('inf'))",
    "linspace_negative": "lib.linspace(0, 1, -1)",
    "eye_negative": "lib.eye(-1)",
    "normal_negative_std": "lib.zeros(2).normal_(0, -1)",
    "uniform_reversed": "lib.zeros(2).uniform_(1, 0)",
    "normal_int": "lib.zeros(2, dtype=lib.int32).normal_()",
    "more_than_64_dims_view": "r = lib.zeros(3).view((1,) * 70 + (3,)).clone()",
    "more_than_64_dims_zeros": "r = lib.zeros((1,) * 70)",
}


@pytest.mark.parametrize("case", sorted(MISC))
def test_misc_errors(case):
    check_isolated(MISC[case])


# ------------------------------------------------------------- every dtype, no crashes
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_errors_in_every_dtype(dtype):
    """The same bad calls on each dtype raise torch's exception type."""
    cases = [
        lambda lib, d: lib.zeros(2, 3, dtype=d).view(5),
        lambda lib, d: lib.zeros(2, 3, dtype=d).t().view(6),
        lambda lib, d: lib.zeros(2, 3, dtype=d).expand(3, 3),
        lambda lib, d: lib.zeros(2, 3, dtype=d).as_strided((7,), (1,)),
        lambda lib, d: lib.zeros(2, 3, dtype=d).unfold(1, 4, 1),
        lambda lib, d: lib.zeros(2, 3, dtype=d).copy_(lib.zeros(3, 2, dtype=d)),
        lambda lib, d: lib.zeros(2, 3, dtype=d)[2],
        lambda lib, d: lib.zeros(2, 3, dtype=d)[0, 0, 0],
        lambda lib, d: lib.zeros(2, 3, dtype=d)[::0],
        lambda lib, d: lib.zeros(2, 3, dtype=d)[[0, 2]],
        lambda lib, d: lib.zeros(2, 3, dtype=d)[lib.ones(3, dtype=lib.bool)],
        lambda lib, d: bool(lib.zeros(2, dtype=d)),
        lambda lib, d: lib.zeros(2, dtype=d).item(),
        lambda lib, d: lib.zeros(2, 3, dtype=d).transpose(0, 2),
        lambda lib, d: lib.zeros(2, 3, dtype=d).t().view(lib.float64 if d.itemsize < 8 else lib.int8),
        lambda lib, d: lib.zeros(2, 3, dtype=d).fill_(300),
        lambda lib, d: lib.zeros(2, 3, dtype=d).fill_(float("nan")),
    ]
    for case in cases:
        check(lambda lib: case(lib, getattr(lib, dtype)))


# every isolated case runs in the same child interpreter(s), started by the first test
for _table in (SIZES, INT64_OVERFLOW, STRIDED, NUMEL_OVERFLOW, TENSOR_DATA, TORCH_CRASHES, MISC):
    _ALL_CODES.extend(_table.values())
_ALL_CODES.extend(STATED_SIZES)
_ALL_CODES.extend(code for code, _ in STATED_DATA)
