"""CLI verbs derived from a proto service: one sub-command per RPC, one option per request field."""

from __future__ import annotations

import argparse
import re
from typing import Any

from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor

_OPTION_TYPES = {
    FieldDescriptor.TYPE_STRING: str,
    FieldDescriptor.TYPE_INT32: int,
    FieldDescriptor.TYPE_INT64: int,
    FieldDescriptor.TYPE_DOUBLE: float,
    FieldDescriptor.TYPE_FLOAT: float,
}


CLIENT_FLAGS = frozenset({"--namespace", "--daemon", "--token-file", "--json", "--idempotency-key"})


def kebab_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def add_rpc_verbs(parser: argparse.ArgumentParser, methods: list[MethodDescriptor], descriptions: dict[str, str],
                  add_client_options) -> None:
    """Sub-commands named after the RPCs ("UpsertFact" -> "upsert-fact"), with --field options from the request."""
    verbs = parser.add_subparsers(dest="rpc", required=True, metavar="RPC")
    for method in methods:
        verb = verbs.add_parser(kebab_case(method.name), help=descriptions.get(method.full_name, ""))
        verb.set_defaults(rpc_method=method)
        for field in method.input_type.fields:
            _add_field_option(verb, field, descriptions.get(field.full_name, ""))
        add_client_options(verb)


def _add_field_option(parser: argparse.ArgumentParser, field: FieldDescriptor, help_text: str) -> None:
    from cortexd.v1 import cortexd_pb2

    flag = "--" + field.name.replace("_", "-")
    if flag in CLIENT_FLAGS:  # a request field named like a client option ("namespace") gets a prefix
        flag = "--request-" + flag[2:]
    required = field.GetOptions().Extensions[cortexd_pb2.required]
    if field.type == FieldDescriptor.TYPE_BOOL:
        # An optional bool has three states (unset, true, false), a plain one two.
        action = argparse.BooleanOptionalAction if field.has_presence else "store_true"
        parser.add_argument(flag, dest=f"field_{field.name}", action=action, default=None, help=help_text)
    elif field.type in _OPTION_TYPES:
        kind = _OPTION_TYPES[field.type]
        if field.is_repeated:
            parser.add_argument(flag, dest=f"field_{field.name}", type=kind, action="append", help=help_text + " (repeatable)",
                                required=required)
        else:
            parser.add_argument(flag, dest=f"field_{field.name}", type=kind, required=required, help=help_text)


def request_fields(args: argparse.Namespace, method: MethodDescriptor) -> dict[str, Any]:
    """The request's fields from parsed options; options left out stay unset (proto defaults apply)."""
    return {f.name: getattr(args, f"field_{f.name}") for f in method.input_type.fields
            if getattr(args, f"field_{f.name}", None) is not None}
