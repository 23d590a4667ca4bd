#!/usr/bin/python3
"""Mixed producers for the partitioner test: each group's episodes are published alternately by a producer with
librdkafka's default partitioner (consistent_random, CRC32) and one with murmur2_random (the Java client's), so
a group's steps land on two partitions whenever the two disagree. Uses the Python example's encoder and
environment. Prints one JSON line per episode: group, episode, steps, the partitions its steps went to, and
the latest event time (epoch ms).

    partitioner_producer.py <bootstrap> <topic> <run-id> <groups> <episodes> announce|silent
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python"))
import publish_steps  # noqa: E402
from confluent_kafka import Producer  # noqa: E402


def main() -> int:
    bootstrap, topic, run_id, groups, episodes, mode = sys.argv[1:7]
    groups, episodes = int(groups), int(episodes)
    writer = publish_steps.SingleObjectWriter(publish_steps.DEFAULT_SCHEMA)
    base = {"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5}
    # No "partitioner" setting at all: librdkafka's default.
    producers = [Producer(dict(base)), Producer(dict(base, partitioner="murmur2_random"))]
    partitions = {}
    failures = []

    def delivered(episode_id):
        def report(error, message):
            if error is not None:
                failures.append(str(error))
            else:
                partitions.setdefault(episode_id, set()).add(message.partition())
        return report

    env = publish_steps.LineWalk()
    summary = []
    for group in range(groups):
        group_id = f"{run_id}-g{group}"
        for episode in range(episodes):
            episode_id = f"{group_id}-e{episode}"
            size = episodes if mode == "announce" else None
            events = publish_steps.play_episode(env, run_id, group_id, episode_id, 100 + group, episode, 0, size)
            producer = producers[episode % 2]
            for event in events:
                producer.produce(topic, key=group_id.encode("utf-8"), value=writer.encode(event), on_delivery=delivered(episode_id))
                producer.poll(0)
            summary.append({"groupId": group_id, "episodeId": episode_id, "steps": len(events),
                            "lastEventTimeMs": int(events[-1]["eventTimeMs"].timestamp() * 1000)})
    for producer in producers:
        if producer.flush(30) > 0:
            failures.append("not all delivered")
    if failures:
        print("failures: " + "; ".join(failures), file=sys.stderr)
        return 1
    for line in summary:
        line["partitions"] = sorted(partitions.get(line["episodeId"], []))
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
