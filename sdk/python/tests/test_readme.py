"""The README's examples, run as written with the install line that needs no
download (PYTHONPATH): the "verify a delivery" example listens, the "create an
event" example creates an event whose delivery the first one verifies. Only
the receiver's port 3000 is swapped for a free one."""
import os
import re
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from .harness import free_port, server, wait_for

PACKAGE = Path(__file__).resolve().parents[1]


class Readme(unittest.TestCase):
    def test_examples_run_as_written(self):
        readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
        blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
        create, verify = blocks[0], blocks[1]
        self.assertIn("events.create", create)
        self.assertIn("verify_delivery", verify)
        srv = server()
        port = str(free_port())
        app = tempfile.mkdtemp(prefix="qhronos-readme-py-")
        Path(app, "verify_example.py").write_text(verify.replace("3000", port))
        Path(app, "create_example.py").write_text(create.replace("3000", port))
        env = {**os.environ, "PYTHONPATH": str(PACKAGE), "QHRONOS_SECRET": srv.default_secret,
               "QHRONOS_URL": srv.url, "QHRONOS_TOKEN": srv.token}
        out = open(Path(app, "receiver.log"), "w+b")
        receiver = subprocess.Popen([sys.executable, "verify_example.py"], cwd=app, env=env, stdout=out, stderr=out)
        self.addCleanup(out.close)
        self.addCleanup(receiver.wait)
        self.addCleanup(receiver.kill)

        def refuses_unsigned():
            try:
                urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/hooks", data=b"", method="POST"), timeout=2)
            except urllib.error.HTTPError as e:
                return e.code == 401
            except OSError:
                return False
            return False

        wait_for("the example receiver listens and refuses an unsigned request", refuses_unsigned)
        created = subprocess.run([sys.executable, "create_example.py"], cwd=app, env=env, check=True,
                                 capture_output=True, text=True).stdout
        self.assertRegex(created, r"^created [0-9a-f-]{36}$")

        def verified():
            out.seek(0)
            return re.search(rb"occurrence [0-9a-f-]{36} of ping", out.read())

        wait_for("the example receiver verifies the delivery", verified, timeout=90)

