"""Writes six_output_model.onnx: a stand-in for an intent model built before the request heads (six logits, no BERT)."""

# Build venv only (needs onnx):  /work/trainenv/bin/python tests/data/intent/make_six_output_model.py
# Its logits depend on the token ids, so a test can tell texts apart; what matters is the output width of 6.

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def build() -> onnx.ModelProto:
    weights = numpy_helper.from_array(np.linspace(-1e-4, 1e-4, 6, dtype=np.float32).reshape(1, 6), "weights")
    bias = numpy_helper.from_array(np.arange(6, dtype=np.float32) * 0.1, "bias")
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids_float"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["ids_float", "axes"], ["id_sum"], keepdims=1),
        helper.make_node("MatMul", ["id_sum", "weights"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "six_output_intent_stand_in",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch_size", "sequence_length"]) for name in INPUTS],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 6])],
        initializer=[weights, bias, axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="cortexd-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    onnx.save(build(), str(Path(__file__).with_name("six_output_model.onnx")))
