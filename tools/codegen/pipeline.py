"""load -> passes -> emitters; writes only the files whose text changed, so the build
recompiles only what a declaration change touched."""
from __future__ import annotations

from pathlib import Path

from . import emit_autograd, emit_dtypes, emit_elementwise, emit_kernels, emit_ops_header, emit_python, emit_pyi, passes
from .load import load

EMITTERS = (emit_autograd, emit_dtypes, emit_elementwise, emit_kernels, emit_ops_header, emit_python)
ROOT = Path(__file__).resolve().parents[2]


def write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return True


def generate(out_dir, root: Path = ROOT, pyi_path=None) -> list[str]:
    """Generates into out_dir; returns the .cpp files to compile. Also writes the .pyi
    stub for ember._C next to the package (pyi_path) so editors find it."""
    out_dir = Path(out_dir)
    model = passes.run(load(root))
    files: dict[str, str] = {}
    for emitter in EMITTERS:
        for name, text in emitter.emit(model).items():
            assert name not in files, f"two emitters write {name}"
            files[name] = text
    for name, text in files.items():
        write_if_changed(out_dir / name, text)
    for stale in out_dir.glob("*"):
        if stale.is_file() and stale.name not in files:
            stale.unlink()
    write_if_changed(Path(pyi_path) if pyi_path else root / "ember" / "_C.pyi", emit_pyi.emit(model))
    return sorted(str(out_dir / n) for n in files if n.endswith(".cpp"))
