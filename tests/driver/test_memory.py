"""memory.status_kib: a field of /proc/PID/status in kB, read as bytes (a
job's child reads its VmData on the call's path), and 0 when the field or
the process is not there."""
import os
import signal
import subprocess
import sys

from driver import memory


def text_field(field, pid="self"):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])


def test_fields_of_a_stopped_process_match_the_text():
    # a process that stands still (up, then stopped): its sizes do not
    # move between the two reads
    p = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                         stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"up\n"
        os.kill(p.pid, signal.SIGSTOP)
        for field in ("VmData", "VmRSS", "VmPeak", "Threads"):
            assert memory.status_kib(field, p.pid) == text_field(field, p.pid) > 0
    finally:
        p.kill()
        p.wait()


def test_self_and_a_field_at_the_start_of_a_line_only():
    assert memory.status_kib("VmData") > 0
    # "Data" is the end of "VmData:", not a field of its own
    assert memory.status_kib("Data") == 0


def test_missing_field_or_process_is_zero():
    assert memory.status_kib("NoSuchField") == 0
    assert memory.status_kib("Name") == 0  # not a number
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert memory.status_kib("VmRSS", dead.pid) == 0
    assert not os.path.exists("/proc/%d/status" % dead.pid)
