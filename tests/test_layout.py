"""The house's rooms and the doors between them: which package of cortexd may import which, pinned by the source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DAEMON = ROOT / "memory_daemon"

# Each room of memory_daemon and the rooms it may import (besides itself and the package root's __version__).
# Read top-down: api -> context -> journal -> graph -> memory -> retrieval/activation -> store -> core.
MAY_IMPORT = {
    "core": set(),
    "store": {"core"},
    "activation": {"core"},
    "retrieval": {"core", "store"},
    "memory": {"core", "store", "activation", "retrieval"},
    "graph": {"core", "store", "memory"},
    "journal": {"core", "store", "memory", "graph"},
    "context": {"core", "store", "retrieval", "memory", "graph", "journal"},
    "client": {"core"},
    "ops": {"core", "store", "memory", "client"},
    "api": {"core", "store", "activation", "retrieval", "memory", "graph", "journal", "context", "ops"},
    "demo": {"client"},
    "evals": {"core", "client"},
    "bench": {"core", "store", "retrieval", "client", "ops"},
}
HEAVY = ("duckdb", "spacy", "onnxruntime", "numpy")


def imported_modules(path: Path) -> set[str]:
    """Every absolute module a file imports, at the top or inside a function (lazy imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; the project imports absolutely"
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def daemon_modules() -> dict[str, set[str]]:
    """memory_daemon's modules and, for each, the project modules (not names) it imports."""
    files = {module_name(path): path for path in DAEMON.rglob("*.py")}
    return {name: {m for m in imported_modules(path) if m in files and m != name} for name, path in files.items()}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (DAEMON / parts[1]).is_dir()) else None


def test_every_room_is_known_and_documented():
    rooms = {p.name for p in DAEMON.iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(MAY_IMPORT)
    for room in rooms:
        docstring = ast.get_docstring(ast.parse((DAEMON / room / "__init__.py").read_text()))
        assert docstring and "import" in docstring.lower(), f"memory_daemon/{room}/__init__.py must say its job and what it may import"


def test_every_module_says_its_job():
    for base in ("memory_daemon", "preprocessing", "proxy_server"):
        for path in (ROOT / base).rglob("*.py"):
            assert ast.get_docstring(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} has no docstring"


def test_rooms_import_only_downwards():
    wrong = []
    for module, imports in daemon_modules().items():
        room = room_of(module)
        if room is None:  # the package root, the CLI and __main__ compose every room
            continue
        for target in imports:
            target_room = room_of(target)
            if target_room is None:
                if target != "memory_daemon":  # the root's __version__ is free to read
                    wrong.append(f"{module} -> {target}")
            elif target_room != room and target_room not in MAY_IMPORT[room]:
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against the house's direction:\n" + "\n".join(sorted(wrong))


def test_room_order_has_no_circle():
    order: list[str] = []
    remaining = dict(MAY_IMPORT)
    while remaining:
        ready = [room for room, needs in remaining.items() if needs <= set(order)]
        assert ready, f"rooms that import each other in a circle: {sorted(remaining)}"
        order.extend(sorted(ready))
        for room in ready:
            del remaining[room]


def test_no_module_import_circle():
    graph = daemon_modules()
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in graph[module]:
            if state.get(target) == 1:
                raise AssertionError("import circle: " + " -> ".join(trail[trail.index(target):] + [module, target])
                                     if target in trail else f"import circle through {module} -> {target}")
            if target not in state:
                visit(target, trail + [module])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [])


@pytest.mark.parametrize("package, allowed", [("preprocessing", ("preprocessing",)),
                                              ("proxy_server", ("proxy_server", "cortexd"))])
def test_outer_packages_keep_to_themselves(package, allowed):
    project = ("memory_daemon", "preprocessing", "proxy_server", "cortexd")
    for path in (ROOT / package).rglob("*.py"):
        for module in imported_modules(path):
            if module.split(".")[0] in project:
                assert module.split(".")[0] in allowed, f"{path.relative_to(ROOT)} imports {module}"


def modules_loaded_by(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sys.modules))"
    return set(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                              cwd=ROOT).stdout.split())


@pytest.mark.parametrize("module", ["proxy_server.server", "memory_daemon.client.hooks",
                                    "memory_daemon.client.python_client", "memory_daemon.client.transfer_cli",
                                    "memory_daemon.client.launcher", "memory_daemon.client.proto_cli"])
def test_client_side_imports_nothing_heavy(module):
    heavy = {name for name in modules_loaded_by(module) if name.split(".")[0] in HEAVY}
    assert not heavy, f"{module} loads {sorted(heavy)}"


def test_the_daemon_loads_no_measuring_code():
    loaded = modules_loaded_by("memory_daemon.api.server")
    measuring = sorted(m for m in loaded if m.split(".")[:2] in (["memory_daemon", "bench"], ["memory_daemon", "evals"],
                                                                 ["memory_daemon", "demo"]))
    assert not measuring, f"`cortexd serve` loads {measuring}"
    assert "memory_daemon.api.server" in loaded


def test_the_readme_client_import_works_and_stays_light():
    code = ("import sys\nimport memory_daemon.client.hooks\nassert 'memory_daemon.client.python_client' not in sys.modules\n"
            "from memory_daemon.client import CortexdClient, as_dict\n"
            "assert CortexdClient.__module__ == 'memory_daemon.client.python_client' and callable(as_dict)\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
