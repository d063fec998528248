import sys, time, os, math, signal, subprocess
sys.path.insert(0, os.path.dirname(__file__))
from countdown_system import *
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
servers = Servers()
transport = os.environ.get("PROBE_TRANSPORT", "log")
d = Deployment(servers, "probe", settings={"PUSH_TRANSPORT": transport, "LOG_LEVEL": "warn"})
try:
    d.fake.fault({"latencyMs": 30})
    N = 5000
    d.sql(seed_people_sql("p", N))
    ws = [d.start_worker({"PUSH_TRANSPORT": transport}) for _ in range(2)]
    time.sleep(2)
    for r in range(1, 6):
        pre = f"r{r}."
        T0 = math.ceil(d.db_now()) + 4
        d.sql(seed_streams_sql("p", pre, N, f"to_timestamp({T0}+3600)"))
        wait_for(lambda: int(d.scalar(f"SELECT count(*) FROM countdown_stream_progress WHERE stream_id LIKE '{pre}%' AND start_done_for IS NOT NULL")) >= N, 300, "done", every=0.5)
        print(transport, "run", r, "done at", round(time.time()-T0,1), "rss", [round(w.memory_kb()[0]/1024,1) for w in ws], flush=True)

finally:
    d.close()
