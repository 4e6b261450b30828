"""GPU turns for replays compiled side by side (``replay/turns.py``): the parent gives
timing turns in ticket order and prep turns between them, never two at once, and skips
a replay that ended without asking. Real threads playing the replays' side."""

import threading
import time

from fusionviz.model.replay.turns import gpu_turn, schedule


def _replay(folder, ticket, log, lock, prep_delay, fail=False):
    time.sleep(prep_delay)
    with gpu_turn(folder, f"p{ticket}"):
        with lock:
            log.append(("start", f"p{ticket}"))
        time.sleep(0.01)
        with lock:
            log.append(("end", f"p{ticket}"))
    if fail:  # a compile that raised: it never asks for its timing turn
        return
    time.sleep(0.05 * (3 - ticket % 3))  # later tickets may be ready first
    with gpu_turn(folder, f"t{ticket}"):
        with lock:
            log.append(("start", f"t{ticket}"))
        time.sleep(0.02)
        with lock:
            log.append(("end", f"t{ticket}"))


def test_turns_come_in_ticket_order_one_at_a_time(tmp_path):
    log, lock = [], threading.Lock()
    threads = [threading.Thread(target=_replay, args=(str(tmp_path), t, log, lock,
                                                      0.01 * (5 - t), t == 2))
               for t in range(5)]
    for th in threads:
        th.start()
    schedule(tmp_path, range(5), lambda t: not threads[t].is_alive())
    for th in threads:
        th.join(5)
    # never two turns at once
    assert all(a[0] == "start" and b == ("end", a[1]) for a, b in zip(log[::2], log[1::2]))
    timing = [name for what, name in log if what == "start" and name.startswith("t")]
    assert timing == ["t0", "t1", "t3", "t4"]  # in order, the failed replay skipped
    assert {name for what, name in log if name.startswith("p")} == {f"p{t}" for t in range(5)}


def test_stopping_ends_the_schedule_and_the_replays_waiting(tmp_path):
    ended = []

    def waiting() -> None:
        try:
            with gpu_turn(str(tmp_path), "t1"):
                ended.append("ran")
        except SystemExit as e:
            ended.append(str(e))

    replay = threading.Thread(target=waiting)
    replay.start()
    started = time.monotonic()
    schedule(tmp_path, [0, 1], lambda _t: False,
             stopped=lambda: time.monotonic() - started > 0.1)
    assert time.monotonic() - started < 2
    replay.join(5)
    assert not replay.is_alive() and "cancelled" in ended[0]


def test_without_a_folder_a_turn_is_free():
    with gpu_turn(None, "t0"):
        pass
