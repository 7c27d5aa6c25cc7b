"""The code generator on tiny declarations: schema round trips, validation errors with
file:line, and the snippets the emitters produce."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.codegen import emit_elementwise, emit_kernels, emit_ops_header, emit_python, passes  # noqa: E402
from tools.codegen.load import load, load_ops  # noqa: E402
from tools.codegen.model import DeclarationError  # noqa: E402
from tools.codegen.schema import SchemaError, parse_schema  # noqa: E402

SCHEMAS = [
    "view(Tensor self, int... size) -> Tensor",
    "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    "split(Tensor self, int split_size, int dim=0) -> Tensor[]",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)",
    "as_strided(Tensor self, int[] size, int[] stride, int? storage_offset=None) -> Tensor",
]


@pytest.mark.parametrize("text", SCHEMAS)
def test_schema_round_trip(text):
    assert str(parse_schema(text)) == text


@pytest.mark.parametrize("text, message", [
    ("view(Tensor self, int... size)", "missing '-> ReturnType'"),
    ("view(Tensor self, Foo size) -> Tensor", "unknown type 'Foo'"),
    ("view(Tensor self, float... size) -> Tensor", "only int takes varargs"),
    ("view(Tensor self, int a, int a) -> Tensor", "appears twice"),
    ("view(Tensor self,int... size) -> Tensor", "canonical form"),
    ("f(int?[] x) -> Tensor", "only Tensor lists take None items"),
])
def test_schema_errors(text, message):
    with pytest.raises(SchemaError, match=re.escape(message)):
        parse_schema(text)


def write_ops(tmp_path, text):
    folder = tmp_path / "declarations" / "ops"
    folder.mkdir(parents=True)
    (folder / "tiny.yaml").write_text(text)
    return folder


def test_validation_errors_name_file_and_line(tmp_path):
    folder = write_ops(tmp_path, "- func: a(Tensor self) -> Tensor\n  doc: x\n\n- func: b(Tensor self) -> Tensor\n  colour: red\n  doc: x\n")
    with pytest.raises(DeclarationError, match=r"declarations/ops/tiny.yaml:4: unknown key\(s\) \['colour'\]"):
        load_ops(folder, tmp_path)


def test_duplicate_and_missing_doc(tmp_path):
    folder = write_ops(tmp_path, "- func: a(Tensor self) -> Tensor\n  doc: x\n- func: a(Tensor self) -> Tensor\n  doc: y\n")
    with pytest.raises(DeclarationError, match="already declared at declarations/ops/tiny.yaml:1"):
        load_ops(folder, tmp_path)
    (folder / "tiny.yaml").write_text("- func: a(Tensor self) -> Tensor\n")
    with pytest.raises(DeclarationError, match="needs a 'doc:'"):
        load_ops(folder, tmp_path)


def test_method_needs_self_and_inplace_needs_mutation(tmp_path):
    folder = write_ops(tmp_path, "- func: a(int x) -> Tensor\n  variants: method\n  doc: x\n")
    with pytest.raises(DeclarationError, match="first argument must be 'Tensor self'"):
        load_ops(folder, tmp_path)
    (folder / "tiny.yaml").write_text("- func: a_(Tensor self) -> Tensor\n  variants: method\n  doc: x\n")
    model = load(ROOT)
    ops = load_ops(folder, tmp_path)
    with pytest.raises(DeclarationError, match="must take and return Tensor\\(a!\\)"):
        passes.run(model.__class__(dtypes=model.dtypes, ops=ops))


def tiny_model(tmp_path, text):
    folder = write_ops(tmp_path, text)
    real = load(ROOT)
    return passes.run(real.__class__(dtypes=real.dtypes, ops=load_ops(folder, tmp_path)))


def test_overloads_tensor_before_scalar_and_aliases(tmp_path):
    model = tiny_model(tmp_path, """
- func: fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
  variants: method
  doc: x
- func: fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
  variants: method
  doc: x
- func: transpose(Tensor self, int dim0, int dim1) -> Tensor
  variants: function, method
  aliases: [swapaxes]
  doc: x
""")
    by_name = {(b.kind, b.name): b for b in model.bindings}
    assert [o.op.schema.overload for o in by_name[("method", "fill_")].overloads] == ["Tensor", "Scalar"]
    assert ("function", "swapaxes") in by_name and ("method", "swapaxes") in by_name


def test_variants_from_one_declaration(tmp_path):
    """inplace, out= and Python operators all come from one declaration; the C++ op
    takes a trailing Out, and reflected operators swap the operands."""
    model = tiny_model(tmp_path, """
- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method, inplace, out
  kernel: binary.sub
  numbers: [self, other]
  operators: [__sub__, __rsub__, __isub__]
  doc: x
""")
    by_name = {(b.kind, b.name): b for b in model.bindings}
    assert set(by_name) == {("function", "sub"), ("method", "sub"), ("method", "sub_"), ("method", "__sub__"),
                            ("method", "__rsub__"), ("method", "__isub__")}
    assert by_name[("method", "__rsub__")].operator and not by_name[("method", "sub")].operator
    header = emit_ops_header.emit(model)["ops_decl.h"]
    assert "Tensor sub_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha, const Out& out = Out());" in header
    py = emit_python.emit(model)["python_tiny.cpp"]
    assert "api::sub_Tensor(a.tensor(0), unwrap(self), a.scalar(1, Scalar(int64_t(1))), Out{})" in py  # __rsub__
    assert "api::sub_Tensor(unwrap(self), a.tensor(0), a.scalar(1, Scalar(int64_t(1))), Out{unwrap(self), true})" in py
    assert 'Out{a.tensor_or_undefined(3), false}' in py  # sub(input, other, alpha=, out=)
    assert "Py_RETURN_NOTIMPLEMENTED" in py
    body = emit_elementwise.emit(model)["ops_elementwise.cpp"]
    assert 'return binary(kernels::BinaryOp::sub, {"sub", Promote::Common, DTypes::All}, self, other, {Scalar(alpha)}, out);' in body


def test_out_dtype_and_checked_numbers(tmp_path):
    """out_dtype and numbers_checked reach the op's Spec; the defaults stay implicit."""
    model = tiny_model(tmp_path, """
- func: clamp_min(Tensor self, Tensor min) -> Tensor
  variants: function, out
  kernel: binary.clamp_min
  numbers: [min]
  out_dtype: exact
  numbers_checked: true
  doc: x
""")
    body = emit_elementwise.emit(model)["ops_elementwise.cpp"]
    assert ('{"clamp_min", Promote::Common, DTypes::All, false, OutDType::Exact, true}, self, min, {}, out);'
            in body)


def test_tuple_out_and_return_types(tmp_path):
    """An op returning named tensors takes out= as a tuple: the results are written into
    it (ops::write_outs) and returned as ember.return_types.<name>_out; both types are listed."""
    model = tiny_model(tmp_path, """
- func: cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
  variants: function, method, out
  doc: x
""")
    assert "Out" not in emit_ops_header.emit(model)["ops_decl.h"].split("cummax(")[1].split(";")[0]
    py = emit_python.emit(model)
    assert '{"out", PType::TensorList, true, true, true, false}' in py["python_tiny.cpp"]
    assert ('named_tuple_type("cummax_out", {"values", "indices"}); return wrap_named(out_type, '
            'ops::write_outs(api::cummax(a.tensor(0), a.to_int(1)), a.tensor_list(2, false)));') in py["python_tiny.cpp"]
    assert '{"cummax", {"values", "indices"}},\n    {"cummax_out", {"values", "indices"}},' in py["python_tables.h"]
    with pytest.raises(DeclarationError, match="a tuple out= needs named returns"):
        tiny_model(tmp_path / "unnamed", "- func: f(Tensor self) -> (Tensor, Tensor)\n  variants: function, out\n  doc: x\n")


@pytest.mark.parametrize("entry, message", [
    ("  out_dtype: sideways", "out_dtype must be one of"),
    ("  numbers: [alpha]", "not Tensor arguments"),
    ("  operators: [__isub__]\n  variants: function", "needs the inplace variant"),
    ("  operators: [__frob__]", "unknown operator"),
    ("  promote: sideways", "promote must be one of"),
    ("  kernel: binary.sub\n  func2: x", "unknown key"),
])
def test_elementwise_declaration_errors(tmp_path, entry, message):
    with pytest.raises(DeclarationError, match=message):
        tiny_model(tmp_path, f"""
- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
{entry}
  doc: x
""")


def test_emitted_snippets(tmp_path):
    model = tiny_model(tmp_path, """
- func: squeeze.dim(Tensor self, int dim=-1) -> Tensor
  variants: function, method
  kernel: copy
  doc: Removes a dim.
""")
    header = emit_ops_header.emit(model)["ops_decl.h"]
    assert "Tensor squeeze_dim(const Tensor& self, int64_t dim);" in header
    py = emit_python.emit(model)["python_tiny.cpp"]
    assert "api::squeeze_dim(unwrap(self), a.to_int(0, int64_t(-1)))" in py  # the method
    assert "api::squeeze_dim(a.tensor(0), a.to_int(1, int64_t(-1)))" in py  # the function: self is `input`
    assert '{"input", PType::Tensor' in py
    kernels = emit_kernels.emit(model)
    # one file per group of families and dtype (the elementwise families are always built),
    # each including only its own families' definitions
    assert "template struct copy::Kernels<float>;" in kernels["kernels_data_float32.cpp"]
    assert '#include "kernels/copy_impl.h"' in kernels["kernels_data_float32.cpp"]
    assert "binary" not in kernels["kernels_data_float32.cpp"]
    assert "template struct binary::Kernels<float>;" in kernels["kernels_binary_float32.cpp"]
    assert '#include "kernels/unary_impl.h"' not in kernels["kernels_binary_float32.cpp"]
    assert kernels["kernels_pointwise_int8.cpp"].count("template struct") == 3  # compare, predicate, ternary
    groups = ("binary", "data", "pointwise", "unary")
    # complex dtypes: only the families that move elements, all in the data group
    assert set(kernels) == {f"kernels_{g}_{d.name}.cpp" for d in model.dtypes for g in groups
                            if d.kind != "complex" or g == "data"}


def test_entry_lists_and_float_family_instances(tmp_path):
    model = tiny_model(tmp_path, """
- func: total(Tensor self) -> Tensor
  kernel: reduce.sum, reduce.amax
  doc: x
- func: nanfold(Tensor self) -> Tensor
  kernel: reduce.nansum
  doc: x
- func: running(Tensor self, int dim) -> Tensor
  kernel: rowwise.cumsum
  doc: x
- func: expo(Tensor self) -> Tensor
  kernel: unary.exp
  doc: x
- func: pooled(Tensor self) -> Tensor
  kernel: nn_pool
  doc: x
- func: solved(Tensor A) -> Tensor
  kernel: matmul, linalg
  doc: x
""")
    ops = emit_elementwise.emit(model)
    header = ops["kernel_ops.h"]
    # the reduce and rowwise entries the declarations name, sorted, in their family's namespace
    assert ("namespace ember::kernels::reduce {\nenum class ReduceOp : uint8_t { amax, nansum, sum };\n"
            "#define EMBER_REDUCE_ENTRIES(X) X(amax) X(nansum) X(sum)") in header
    assert "enum class RowOp : uint8_t { cumsum };" in header
    # an elementwise entry comes with its functor's name, and only elementwise ops get a body
    assert "#define EMBER_UNARY_ENTRIES(X) X(exp, exp_fn, false)" in header
    assert "Tensor expo(" in ops["ops_elementwise.cpp"] and "Tensor total(" not in ops["ops_elementwise.cpp"]
    kernels = emit_kernels.emit(model)
    # nn and linalg families: float and double (linalg: std::complex of them too, BLAS and
    # LAPACK's c/z routines), in their own files, not in the per-dtype ones
    for fam in ("nn_pool", "linalg"):
        types = ["float", "double"] + (["std::complex<float>", "std::complex<double>"] if fam == "linalg" else [])
        assert kernels[f"kernel_instances_{fam}.h"].splitlines()[1:] == [
            f"template struct ember::kernels::{fam}::Kernels<{t}>;" for t in types]
        assert fam not in kernels["kernels_data_float32.cpp"]
    assert "template struct matmul::Kernels<float>;" in kernels["kernels_data_float32.cpp"]


def test_floating_only_entries(tmp_path):
    """An entry no op reaches with an integral compute dtype (Note [Floating-only entries],
    kernels/map.h) is marked, so the integral dtypes do not compile it."""
    model = tiny_model(tmp_path, """
- func: expo(Tensor self) -> Tensor
  kernel: unary.exp
  promote: float
  doc: x
- func: sine(Tensor self) -> Tensor
  kernel: unary.sin
  dtypes: floating
  doc: x
- func: logged(Tensor self) -> Tensor
  kernel: unary.log
  promote: float
  doc: x
- func: logged_by_hand(Tensor self) -> Tensor
  kernel: unary.log
  promote: float
  manual: true
  doc: x
- func: negated(Tensor self) -> Tensor
  kernel: unary.neg
  doc: x
""")
    header = emit_elementwise.emit(model)["kernel_ops.h"]
    # promote: float and dtypes: floating never reach an integer; hand-written C++ may; neg does
    assert ("#define EMBER_UNARY_ENTRIES(X) X(exp, exp_fn, true) X(log, log_fn, false) X(neg, neg_fn, false) "
            "X(sin, sin_fn, true)") in header


def test_entries_only_for_families_that_list_them(tmp_path):
    with pytest.raises(DeclarationError, match=r"only the families \['unary'.*'reduce', 'rowwise'\] have entries"):
        tiny_model(tmp_path, "- func: f(Tensor self) -> Tensor\n  kernel: copy.fast\n  doc: x\n")


def test_topic_files_share_generated_files(tmp_path):
    folder = tmp_path / "declarations" / "ops"
    folder.mkdir(parents=True)
    (folder / "nn_a.yaml").write_text("- func: fa(Tensor self) -> Tensor\n  doc: x\n")
    (folder / "nn_b.yaml").write_text("- func: fb(Tensor self) -> Tensor\n  doc: x\n")
    real = load(ROOT)
    model = passes.run(real.__class__(dtypes=real.dtypes, ops=load_ops(folder, tmp_path)))
    assert {op.family for op in model.ops} == {"nn_a", "nn_b"}
    py = emit_python.emit(model)
    assert "python_nn.cpp" in py and "python_nn_a.cpp" not in py
    assert '{"fa",' in py["python_nn.cpp"] and '{"fb",' in py["python_nn.cpp"]


def test_generate_is_deterministic_and_writes_only_changes(tmp_path):
    from tools.codegen import generate

    out = tmp_path / "gen"
    first = generate(out, pyi_path=tmp_path / "_C.pyi")
    stamps = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    assert generate(out, pyi_path=tmp_path / "_C.pyi") == first
    assert {p: p.stat().st_mtime_ns for p in out.iterdir()} == stamps
    assert all(p.read_text().startswith("// generated by tools/codegen") for p in out.iterdir()
               if p.name != ".inputs.json")


def test_generate_skips_a_run_while_its_inputs_are_unchanged(tmp_path):
    import shutil

    from tools.codegen import generate

    root, out, pyi = tmp_path / "root", tmp_path / "gen", tmp_path / "_C.pyi"
    shutil.copytree(ROOT / "declarations", root / "declarations")
    first = generate(out, root=root, pyi_path=pyi)
    (out / "kernel_ops.h").write_text("stale")  # a run would rewrite it; a skipped one leaves it
    assert generate(out, root=root, pyi_path=pyi) == first
    assert (out / "kernel_ops.h").read_text() == "stale"
    with open(root / "declarations" / "ops" / "pointwise.yaml", "a") as f:
        f.write("\n")  # any change to a declaration (or to the generator) runs it again
    assert generate(out, root=root, pyi_path=pyi) == first
    assert (out / "kernel_ops.h").read_text().startswith("// generated by tools/codegen")
    (out / "kernel_ops.h").unlink()  # so does a missing output
    assert generate(out, root=root, pyi_path=pyi) == first
    assert (out / "kernel_ops.h").exists()


def test_autograd_layer_from_a_derivative(tmp_path):
    """One formula line per input gives the node class, what it saves (only when the
    input reading it needs a gradient) and the recording path; ops without a formula
    refuse to record."""
    from tools.codegen import emit_autograd
    from tools.codegen.load import load_derivatives

    model = tiny_model(tmp_path, """
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method, inplace, out
  doc: x
- func: frob(Tensor self) -> Tensor
  doc: x
""")
    (tmp_path / "derivatives.yaml").write_text("- name: mul.Tensor\n  self: grad * other\n  other: grad * self\n")
    model = model.__class__(dtypes=model.dtypes, ops=model.ops, bindings=model.bindings,
                            derivatives=load_derivatives(tmp_path / "derivatives.yaml", tmp_path, model.ops))
    out = emit_autograd.emit(model)
    assert "Tensor mul_Tensor(const Tensor& self, const Tensor& other, const Out& out = Out());" in out["api_decl.h"]
    cpp = out["api_tiny.cpp"]
    assert "struct MulBackward0 final : Node" in cpp
    assert "if (!needs_record(self, other)) return ops::mul_Tensor(self, other, out);" in cpp
    assert "if (need_other) node->self_ = SavedVariable((inplace ? ops::clone(self, std::nullopt) : self), false);" in cpp
    assert "if (need_self) node->other_ = SavedVariable(other, false);" in cpp
    assert "rebase_history(self, node);" in cpp and 'fail_out_requires_grad("mul")' in cpp
    assert 'fail_not_implemented("frob")' in cpp


@pytest.mark.parametrize("text, message", [
    ("- name: nope\n  self: grad\n", "not a declared op"),
    ("- name: mul.Tensor\n  alpha: grad\n", "not a Tensor argument"),
    ("- name: mul.Tensor\n", "give a formula"),
    ("- name: mul.Tensor\n  self: grad\n- name: mul.Tensor\n  self: grad\n", "already has its derivative"),
])
def test_derivative_declaration_errors(tmp_path, text, message):
    from tools.codegen.load import load_derivatives

    model = tiny_model(tmp_path, """
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  doc: x
""")
    (tmp_path / "derivatives.yaml").write_text(text)
    with pytest.raises(DeclarationError, match=message):
        load_derivatives(tmp_path / "derivatives.yaml", tmp_path, model.ops)
