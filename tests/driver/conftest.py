"""The driver's modules, imported from the source tree (src/worker/driver)
as the package `driver`; the built bundle from SAGEBOX_DRIVER_BUNDLE."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.abspath(os.path.join(HERE, "..", "..", "src", "worker"))
sys.path.insert(0, WORKER)
BUNDLE = os.environ.get("SAGEBOX_DRIVER_BUNDLE",
                        os.path.join(HERE, "..", "..", "build", "src", "worker", "driver_bundle.py"))
