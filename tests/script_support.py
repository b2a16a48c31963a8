"""What the Python script tests (tests/plot_test.py, tests/report_test.py) share: the repository root, the
pass/fail tally with one FAIL line per failed check, running a command with a time limit, and the closing
"N passed, M failed" line that ctest's exit code follows."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
results = {"passed": 0, "failed": 0}


def check(condition, what):
    if condition:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print(f"FAIL: {what}")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def finish():
    """Prints the tally; the exit code for sys.exit (1 when any check failed)."""
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0
