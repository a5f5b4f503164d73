"""A PEP 517 build backend with the standard library only, for this one pure-Python package.

pip builds a project in an isolated environment into which it installs the backend named in
pyproject.toml; setuptools and its kin come from a package index, which an offline machine
cannot reach. This backend needs nothing: it zips batch_eval/ into a py3-none-any wheel
(and an sdist), with the name and version read from pyproject.toml's [project] table.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "batch_eval"
# Fixed timestamps make the same sources build the same wheel, byte for byte.
ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[project]", 1)[1].split("\n[", 1)[0]

    def field(name):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % name, section, re.M)
        if not m:
            raise RuntimeError("pyproject.toml [project] has no %s" % name)
        return m.group(1)

    return {
        "name": field("name"),
        "version": field("version"),
        "summary": field("description"),
        "requires_python": field("requires-python"),
    }


def _dist_name(p):
    return re.sub(r"[-_.]+", "_", p["name"]).lower()


def _metadata(p):
    readme_path = os.path.join(ROOT, "README.md")
    readme = open(readme_path, encoding="utf-8").read() if os.path.exists(readme_path) else ""
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p["summary"],
        "License: MIT",
        "Requires-Python: %s" % p["requires_python"],
        "Provides-Extra: notebook",
        'Requires-Dist: pandas; extra == "notebook"',
        'Requires-Dist: tqdm; extra == "notebook"',
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(lines) + "\n\n" + readme


def _sources():
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") or name == "py.typed":
                full = os.path.join(dirpath, name)
                out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, files):
    """files: list of (archive path, bytes); adds the dist-info and returns the wheel's file name."""
    p = _project()
    dist = _dist_name(p)
    info = "%s-%s.dist-info" % (dist, p["version"])
    files = list(files) + [
        (info + "/METADATA", _metadata(p).encode("utf-8")),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: batch_eval_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (info + "/top_level.txt", (PACKAGE + "\n").encode("utf-8")),
    ]
    record = "\n".join([_record_line(path, data) for path, data in files] + [info + "/RECORD,,"]) + "\n"
    files.append((info + "/RECORD", record.encode("utf-8")))
    name = "%s-%s-py3-none-any.whl" % (dist, p["version"])
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files:
            entry = zipfile.ZipInfo(path, ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(entry, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for rel, full in _sources():
        with open(full, "rb") as f:
            files.append((rel, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e`: a .pth file puts this folder on sys.path, so edits show at once."""
    return _write_wheel(wheel_directory, [("_%s_editable.pth" % PACKAGE, (ROOT + "\n").encode("utf-8"))])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (_dist_name(p), p["version"])
    name = base + ".tar.gz"
    members = ["pyproject.toml", "README.md", "_build/batch_eval_build.py"] + [rel for rel, _ in _sources()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel in members:
            full = os.path.join(ROOT, rel)
            if not os.path.exists(full):
                continue
            with open(full, "rb") as f:
                data = f.read()
            info = tarfile.TarInfo("%s/%s" % (base, rel))
            info.size = len(data)
            info.mtime = 1577836800
            tf.addfile(info, io.BytesIO(data))
        pkg_info = _metadata(p).encode("utf-8")
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size = len(pkg_info)
        info.mtime = 1577836800
        tf.addfile(info, io.BytesIO(pkg_info))
    return name
