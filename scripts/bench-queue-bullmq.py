"""The BullMQ side of scripts/bench-queue: the same measurements with BullMQ's normal Queue and Worker API.

    python bench-queue-bullmq.py <command> --redis URL --queue NAME [options]
      enqueue --jobs N                      addBulk N delayed jobs (64-byte payload); prints jobs/s
      worker [--concurrency 256] [--lateness-file F]   Worker with a no-op processor until SIGTERM
      drive --jobs N                        addBulk N jobs due now, wait until the workers drained them
      steady [--rate 1000] [--seconds 5] [--delay-ms 1000]   add delayed jobs at a steady rate, wait until drained
      memory --jobs N                       Redis memory per delayed job

Prints one line `RESULT {...}` (JSON) per measurement, like `countdown-bench queue`.
"""
import argparse
import asyncio
import json
import signal
import time

import redis.asyncio as aioredis
from bullmq import Queue, Worker

PAYLOAD = "x" * 64
JOB_OPTS = {"removeOnComplete": True, "removeOnFail": True}


def result(**values):
    print("RESULT " + json.dumps(values), flush=True)


async def add_all(queue, count, prefix, delay_ms):
    started = time.perf_counter()
    for start in range(0, count, 1000):
        await queue.addBulk([
            {"name": "bench", "data": {"p": PAYLOAD}, "opts": {**JOB_OPTS, "delay": delay_ms, "jobId": f"{prefix}:{i}"}}
            for i in range(start, min(start + 1000, count))
        ])
    return time.perf_counter() - started


async def drained(queue):
    while True:
        counts = await queue.getJobCounts("wait", "active", "delayed", "prioritized", "paused")
        if sum(counts.values()) == 0:
            return
        await asyncio.sleep(0.02)


async def enqueue(args, queue):
    seconds = await add_all(queue, args.jobs, "e", 3_600_000)
    result(jobs=args.jobs, seconds=seconds, rate=args.jobs / seconds)


async def drive(args, queue):
    started = time.perf_counter()
    await add_all(queue, args.jobs, "d", 0)
    await drained(queue)
    seconds = time.perf_counter() - started
    result(jobs=args.jobs, seconds=seconds, rate=args.jobs / seconds)


async def steady(args, queue):
    total = args.rate * args.seconds
    begin = time.time() * 1000
    origin = time.perf_counter()
    sent = 0
    while sent < total:
        target = min(total, int((time.perf_counter() - origin) * args.rate) + 1)
        if target > sent:
            now = time.time() * 1000
            jobs = []
            for index in range(sent, target):
                due = begin + index * 1000 / args.rate + args.delay_ms
                jobs.append({"name": "bench", "data": {"p": PAYLOAD},
                             "opts": {**JOB_OPTS, "delay": max(0, int(round(due - now))), "jobId": f"s:{index}"}})
            await queue.addBulk(jobs)
            sent = target
        await asyncio.sleep(0.005)
    await drained(queue)
    result(jobs=total, rate=args.rate)


async def memory(args, queue):
    client = aioredis.from_url(args.redis)
    before = (await client.info("memory"))["used_memory"]
    seconds = await add_all(queue, args.jobs, "m", 86_400_000)
    after = (await client.info("memory"))["used_memory"]
    await client.aclose()
    result(jobs=args.jobs, bytes_per_job=(after - before) / args.jobs, enqueue_rate=args.jobs / seconds)


async def worker(args):
    lateness = []

    async def process(job, token):
        if args.lateness_file:
            lateness.append(time.time() * 1000 - (job.timestamp + job.delay))
        return None

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    bull = Worker(args.queue, process, {"connection": args.redis, "concurrency": args.concurrency})
    await stop.wait()
    await bull.close()
    if args.lateness_file:
        with open(args.lateness_file, "w") as out:
            out.write("\n".join(f"{value:.3f}" for value in lateness))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["enqueue", "worker", "drive", "steady", "memory"])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--queue", default="bench")
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--lateness-file")
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--delay-ms", type=int, default=1000)
    args = parser.parse_args()
    if args.command == "worker":
        await worker(args)
        return
    queue = Queue(args.queue, {"connection": args.redis})
    try:
        await {"enqueue": enqueue, "drive": drive, "steady": steady, "memory": memory}[args.command](args, queue)
    finally:
        await queue.close()


if __name__ == "__main__":
    asyncio.run(main())
