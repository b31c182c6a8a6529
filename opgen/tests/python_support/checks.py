"""What the framework check scripts (tf_support/check_ops.py,
jax_support/check_ops.py) share: `ok:`/`FAIL:` lines per section, which the
Rust tests read (python_support::assert_section_of), and expected errors.
"""
import sys

failures = []


def ok(section, text):
    print(f"ok: {section}: {text}", flush=True)


def fail(section, text):
    failures.append(text)
    print(f"FAIL: {section}: {text}", flush=True)


def expect_error(section, what, error_type, needle, fn, settle=lambda result: result):
    """`settle(fn())` must raise `error_type` with `needle` in its message
    (`settle` waits for an asynchronous result, e.g. jax.block_until_ready)."""
    try:
        settle(fn())
    except error_type as e:
        message = str(e)
        if needle in message:
            ok(section, f"{what}: {error_type.__name__}: {needle}")
        else:
            fail(section, f"{what}: {error_type.__name__} without `{needle}`: {message}")
    except Exception as e:  # noqa: BLE001
        fail(section, f"{what}: expected {error_type.__name__}, got {type(e).__name__}: {e}")
    else:
        fail(section, f"{what}: expected {error_type.__name__}, nothing raised")


def finish():
    """The last line the Rust side waits for; exit status 1 if any check failed."""
    print(f"done: {len(failures)} failure(s)", flush=True)
    sys.exit(1 if failures else 0)
