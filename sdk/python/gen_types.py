#!/usr/bin/env python3
"""Generates qhronos/types.py from the server's OpenAPI document.

One TypedDict per schema of components.schemas (required members required,
the rest optional; a nullable member is Optional), a Literal per string enum.
A small script rather than a generator package because the SDK must need
nothing outside the standard library, not even to regenerate. Run:

    python3 sdk/python/gen_types.py            # or sdk/generate.sh, for both SDKs

tests/test_contract.py fails when types.py is not what this script makes of
the document.
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCUMENT = HERE.parent.parent / "internal" / "api" / "openapi.json"
OUTPUT = HERE / "qhronos" / "types.py"


def py_type(schema, names):
    """The Python annotation of one schema, as source text."""
    if "$ref" in schema:
        return repr(schema["$ref"].rsplit("/", 1)[-1])
    for combo in ("allOf", "oneOf", "anyOf"):
        if combo in schema:
            parts = [py_type(s, names) for s in schema[combo]]
            t = parts[0] if len(parts) == 1 else "Any"
            return f"Optional[{t}]" if schema.get("nullable") else t
    kind = schema.get("type")
    if "enum" in schema and kind in ("string", None):
        values = [v for v in schema["enum"] if v is not None]
        t = "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"
    elif kind == "string":
        t = "str"
    elif kind == "integer":
        t = "int"
    elif kind == "number":
        t = "float"
    elif kind == "boolean":
        t = "bool"
    elif kind == "array":
        t = f"List[{py_type(schema.get('items', {}), names)}]"
    elif kind == "object" and "additionalProperties" in schema and not schema.get("properties"):
        extra = schema["additionalProperties"]
        t = f"Dict[str, {py_type(extra, names) if isinstance(extra, dict) else 'Any'}]"
    elif kind == "object":
        t = "Dict[str, Any]"
    else:
        t = "Any"
    if schema.get("nullable") or None in schema.get("enum", []):
        t = f"Optional[{t}]"
    return t


def members(props, keys, names):
    return "{" + ", ".join(f"{json.dumps(k)}: {py_type(props[k], names)}" for k in keys) + "}"


def generate(document):
    schemas = document["components"]["schemas"]
    names = set(schemas)
    out = [
        '"""Types of the Qhronos API, generated from internal/api/openapi.json by',
        "sdk/python/gen_types.py. Do not edit: run `sdk/generate.sh`.",
        "",
        "Every object is a TypedDict: answers are plain dicts (event[\"id\"]).",
        '"""',
        "# fmt: off",
        "from typing import Any, Dict, List, Literal, Optional, TypedDict",
        "",
        "__all__ = [" + ", ".join(json.dumps(n) for n in sorted(names)) + "]",
        "",
    ]
    for name in sorted(names):
        s = schemas[name]
        out.append("")
        if s.get("type") == "string" or ("enum" in s and "properties" not in s):
            out.append(f"{name} = {py_type(s, names)}")
            continue
        props = s.get("properties", {})
        required = [k for k in props if k in s.get("required", [])]
        optional = [k for k in props if k not in required]
        # Functional syntax: members such as "from" are Python keywords.
        out.append(f"_{name}Required = TypedDict({json.dumps('_' + name + 'Required')}, {members(props, required, names)})")
        out.append(f"_{name}Optional = TypedDict({json.dumps('_' + name + 'Optional')}, {members(props, optional, names)}, total=False)")
        out.append("")
        out.append("")
        out.append(f"class {name}(_{name}Required, _{name}Optional):")
        doc = (s.get("description") or f"The {name} schema.").replace('"""', "'''").strip()
        out.append(f'    """{doc}"""')
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main():
    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    OUTPUT.write_text(generate(document), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(HERE)} from {len(document['components']['schemas'])} schemas", file=sys.stderr)


if __name__ == "__main__":
    main()
