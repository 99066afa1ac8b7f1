"""A PEP 517 build backend that needs only the standard library, so
`pip install --no-index ./sdk/python` works on a machine with no package index.

It reads [project] from pyproject.toml (flat string values only: that is all
this package declares) and packs the `qhronos` package into a wheel, an sdist
or an editable wheel."""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "qhronos"
TAG = "py3-none-any"


def _project():
    """The [project] table's string values, parsed by hand: tomllib is
    Python >= 3.11 and the package supports 3.9."""
    fields, section = {}, None
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "project":
            m = re.match(r'^([A-Za-z-]+)\s*=\s*"(.*)"$', line)
            if m:
                fields[m.group(1)] = m.group(2)
    for key in ("name", "version"):
        if key not in fields:
            raise ValueError(f"pyproject.toml: [project] {key} is required")
    return fields


def _metadata():
    p = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    text = "\n".join(lines) + "\n"
    if "readme" in p:
        text += "Description-Content-Type: text/markdown\n\n" + (ROOT / p["readme"]).read_text(encoding="utf-8")
    return p, text


def _dist_info(p):
    return f"{p['name'].replace('-', '_')}-{p['version']}.dist-info"


def _package_files():
    """Every file of the package except bytecode, as (path in the archive, path on disk)."""
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path.relative_to(ROOT).as_posix(), path


def _write_wheel(wheel_directory, contents):
    """Writes a wheel of contents ((archive path, bytes) pairs) plus its
    dist-info, with the RECORD of hashes that installers check."""
    p, metadata = _metadata()
    info = _dist_info(p)
    contents = list(contents) + [
        (f"{info}/METADATA", metadata.encode()),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: qhronos_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
    ]
    name = f"{p['name'].replace('-', '_')}-{p['version']}-{TAG}.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        for arc, data in contents:
            whl.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, ((arc, path.read_bytes()) for arc, path in _package_files()))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel holding one .pth line that puts this directory on sys.path."""
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (str(ROOT) + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p, metadata = _metadata()
    base = f"{p['name']}-{p['version']}"
    name = f"{base}.tar.gz"
    files = [("pyproject.toml", ROOT / "pyproject.toml"), ("README.md", ROOT / "README.md")]
    files += [(f"build_backend/{f.name}", f) for f in sorted((ROOT / "build_backend").glob("*.py"))]
    files += list(_package_files())
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arc, path in files:
            tar.add(path, arcname=f"{base}/{arc}")
        data = metadata.encode()
        member = tarfile.TarInfo(f"{base}/PKG-INFO")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
