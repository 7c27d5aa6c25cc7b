"""load -> passes -> emitters; writes only the files whose text changed, so the build
recompiles only what a declaration change touched. Skipped altogether (2 s of every
build) while declarations/ and tools/codegen/ hash as at the last run."""
from __future__ import annotations

import hashlib
import json
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


STAMP = ".inputs.json"  # in out_dir: the inputs' hash and the files the last run wrote


def inputs_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted([*(root / "declarations").rglob("*.yaml"), *Path(__file__).parent.glob("*.py")]):
        h.update(str(path.relative_to(path.parents[1])).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def generate(out_dir, root: Path = ROOT, pyi_path=None) -> list[str]:
    """Generates into out_dir; returns the .cpp files to compile. Also writes the .pyi
    stub for ember._C next to the package (pyi_path) so editors find it."""
    out_dir = Path(out_dir)
    pyi = Path(pyi_path) if pyi_path else root / "ember" / "_C.pyi"
    digest = inputs_digest(root)
    try:
        stamp = json.loads((out_dir / STAMP).read_text())
        if stamp["digest"] == digest and pyi.exists() and all((out_dir / n).exists() for n in stamp["files"]):
            return sorted(str(out_dir / n) for n in stamp["files"] if n.endswith(".cpp"))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    model = passes.run(load(root))
    files: dict[str, str] = {}
    for emitter in EMITTERS:
        for name, text in emitter.emit(model).items():
            assert name not in files, f"two emitters write {name}"
            files[name] = text
    for name, text in files.items():
        write_if_changed(out_dir / name, text)
    for stale in out_dir.glob("*"):
        if stale.is_file() and stale.name not in files and stale.name != STAMP:
            stale.unlink()
    write_if_changed(pyi, emit_pyi.emit(model))
    (out_dir / STAMP).write_text(json.dumps({"digest": digest, "files": sorted(files)}))
    return sorted(str(out_dir / n) for n in files if n.endswith(".cpp"))
