"""DPM's trace records and trace log (meter/) on the host: tests/meter_test.c,
built with the sanitizers, checks that the field tables agree with the C
structs byte for byte, that the trace description (DPM's Fig. 3.3 format)
lists every field at its offset, and that logs of thousands of random
records, whole or with random fields dropped, read back exactly with their
loss counts, and that damaged logs are refused; a new log written over an
older, longer one reads as itself alone (its log identity), a blank trace
disk says so, and a log bounded by its disk's size stops there."""
import os
import re
import struct
import subprocess
import tempfile
from harness import ROOT, TRACELOG_BLOCK, tracelog_checksum

METER_TEST = os.path.join(ROOT, "build", "tools", "meter_test")


def test_meter_tables_description_and_trace_log():
    run = subprocess.run([METER_TEST], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    m = re.match(r"meter_test: (\d+) checks passed", run.stdout)
    assert m and int(m.group(1)) > 10000, run.stdout

RULES_TEST = os.path.join(ROOT, "build", "tools", "rules_test")


def test_description_parser_and_rule_engine():
    """meter/rules.c, the code the filter and the analyzer share: our own
    description parses back into the compiled tables, DPM's sample
    description and example rules work, and mistakes are refused with line,
    column and reason."""
    run = subprocess.run([RULES_TEST], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    m = re.match(r"rules_test: (\d+) checks passed", run.stdout)
    assert m and int(m.group(1)) > 200, run.stdout


DPM = os.path.join(ROOT, "build", "tools", "dpm")
TRACEGEN = os.path.join(ROOT, "build", "tools", "tracegen")


def test_the_checksum_python_port_agrees_with_the_c_one():
    """scripts/harness.py's tracelog_checksum, which the tests use to seal a
    block they damage on purpose, computes what meter/tracelog.c does: the
    values meter_test checks, and every record block of logs the C writer
    made: many blocks of whole records (dpm generate), and a block with
    fields dropped, whose entries are not whole words (tracegen known)."""
    assert tracelog_checksum(b"") == 0xe5a861f3
    assert tracelog_checksum(b"abc") == 0xb2109176
    assert tracelog_checksum(b"abc\0") == 0xb2109179
    assert tracelog_checksum(b"Nobody inspects the spammish repetition") == 0x4468586a
    assert tracelog_checksum(bytes(TRACELOG_BLOCK)) == 0x59189a25
    with tempfile.TemporaryDirectory(prefix="dm-meter-") as work:
        generated, known = os.path.join(work, "random.log"), os.path.join(work, "known.log")
        subprocess.run([DPM, "generate", "--random", "3000", "--seed", "5", generated], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([TRACEGEN, "known", "0x1234", known], check=True, stdout=subprocess.DEVNULL)
        logs = []
        for path in (generated, known):
            with open(path, "rb") as f:
                logs.append(f.read())
    sealed = 0
    for data in logs:
        header_blocks = struct.unpack_from("<I", data, 16)[0]
        for index in range(header_blocks, len(data) // TRACELOG_BLOCK):
            block = bytearray(data[index * TRACELOG_BLOCK:(index + 1) * TRACELOG_BLOCK])
            stored = struct.unpack_from("<I", block, 20)[0]
            block[20:24] = bytes(4)
            assert tracelog_checksum(bytes(block)) == stored, "block %d" % index
            sealed += 1
    assert sealed > 40
    used = struct.unpack_from("<I", logs[1], struct.unpack_from("<I", logs[1], 16)[0] * TRACELOG_BLOCK + 12)[0]
    assert used % 8 != 0, used
