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
import subprocess
from harness import ROOT

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
