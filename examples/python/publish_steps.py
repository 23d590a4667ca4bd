#!/usr/bin/python3
"""A custom environment written in Python, end to end through trajflow.

A tiny environment (LineWalk: walk right along a corridor to the goal) plays a few groups x episodes,
and every step becomes a trajflow step event: Avro binary in single-object encoding (single_object.py),
written straight to Kafka with confluent-kafka, keyed by group id with the Java-compatible partitioner
and the group's size announced, exactly as trajflow's TypeScript SDK writes it. Then it reads back what
trajflow made of them: the trajectories and training samples from Kafka, and the rows the sink stored in
ClickHouse (read_back.py).

Needs only Debian packages:  apt-get install python3-confluent-kafka python3-avro
With `npm start` running (or `trajflow processors` and `trajflow sink`), run with Debian's interpreter
(/usr/bin/python3), where apt installs them:

    /usr/bin/python3 examples/python/publish_steps.py --groups 2 --episodes 3
"""

import argparse
import datetime
import json
import os
import sys
import time
import uuid

from confluent_kafka import Producer

from read_back import clickhouse_rows, read_run_events
from single_object import SingleObjectWriter

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "..", "schemas", "step", "v1.avsc")


# ---------------------------------------------------------------------------------------------
# A tiny environment: LineWalk
# ---------------------------------------------------------------------------------------------

class LineWalk:
    """Cells 0..4, the goal at 4; actions Left and Right in RAGEN's <answer>...</answer>.

    reset(seed) starts at seed % 3. Reaching the goal gives reward 1 and terminates; after
    MAX_TURNS turns the episode is truncated. An unknown action is invalid: nothing moves.
    """

    NAME, VERSION = "LineWalk", "v1"
    LENGTH, GOAL, MAX_TURNS = 5, 4, 6

    def reset(self, seed: int) -> str:
        self.position = seed % 3
        self.turns = 0
        return self.render()

    def render(self) -> str:
        return " ".join("A" if i == self.position else ("G" if i == self.GOAL else "_") for i in range(self.LENGTH))

    def state_key(self) -> str:
        return f"pos={self.position}"

    def step(self, action_text: str):
        self.turns += 1
        answer = action_text.partition("<answer>")[2].partition("</answer>")[0].strip()
        valid = answer in ("Left", "Right")
        if valid:
            delta = 1 if answer == "Right" else -1
            self.position = min(max(self.position + delta, 0), self.LENGTH - 1)
        terminated = self.position == self.GOAL
        truncated = not terminated and self.turns >= self.MAX_TURNS
        reward = 1.0 if terminated else 0.0
        return self.render(), reward, terminated, truncated, valid


def scripted_policy(episode: int, turn: int) -> str:
    """Episode 0 walks right (reaches the goal), 1 walks left (truncated), 2 stumbles once, then walks right."""
    if episode % 3 == 1:
        return "<think>left, maybe</think><answer>Left</answer>"
    if episode % 3 == 2 and turn == 0:
        return "<think>jump!</think><answer>Jump</answer>"
    return "<think>the goal is to the right</think><answer>Right</answer>"


def fake_tokens(text: str):
    """Stand-ins for the policy's sampled tokens and their log-probs (a real policy reports its own)."""
    ids = list(text.encode("utf-8"))
    return ids, [-0.05] * len(ids)


# ---------------------------------------------------------------------------------------------
# Playing and publishing
# ---------------------------------------------------------------------------------------------

def play_episode(env, run_id, group_id, episode_id, seed, episode, policy_version, group_size=None):
    """Plays one episode and returns its step events (each holds the observation and state key BEFORE the action)."""
    observation = env.reset(seed)
    state_key = env.state_key()
    events = []
    for step_index in range(env.MAX_TURNS):
        action = scripted_policy(episode, step_index)
        next_observation, reward, terminated, truncated, valid = env.step(action)
        token_ids, log_probs = fake_tokens(action)
        metrics = {"success": 1.0 if terminated else 0.0} if terminated or truncated else {}
        events.append({
            "eventId": str(uuid.uuid4()),
            "runId": run_id,
            "envName": env.NAME,
            "envVersion": env.VERSION,
            "groupId": group_id,
            "episodeId": episode_id,
            "stepIndex": step_index,
            "observation": observation,
            "observationTokenIds": None,
            "action": action,
            "actionTokenIds": token_ids,
            "actionLogProbs": log_probs,
            "policyVersion": policy_version,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "actionValid": valid,
            "stateKey": state_key,
            "metrics": metrics,
            "info": step_info(valid, group_size),
            # timestamp-millis: python3-avro writes a datetime as epoch milliseconds.
            "eventTimeMs": datetime.datetime.now(datetime.timezone.utc),
        })
        observation, state_key = next_observation, env.state_key()
        if terminated or truncated:
            break
    return events


def step_info(valid, group_size):
    """info.groupSize announces how many episodes the group has (a decimal string, the same on every step of the
    group): the processors close the group as soon as that many have ended. Without it they close it a few seconds
    (--group-idle-close-ms) after its last episode ended."""
    info = {} if group_size is None else {"groupSize": str(group_size)}
    if not valid:
        info["problem"] = "unknown action"
    return info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default=os.environ.get("TRAJFLOW_KAFKA_BROKERS", "127.0.0.1:19092"),
                        help="Kafka brokers, host:port[,host:port] (default: $TRAJFLOW_KAFKA_BROKERS or trajflow's own broker)")
    parser.add_argument("--prefix", default=os.environ.get("TRAJFLOW_TOPIC_PREFIX", "trajflow"),
                        help="topic prefix (default: $TRAJFLOW_TOPIC_PREFIX or trajflow)")
    parser.add_argument("--topic", default=None, help="the step topic (default: <prefix>.env.steps)")
    parser.add_argument("--schema", default=DEFAULT_SCHEMA, help="path of schemas/step/v1.avsc")
    parser.add_argument("--run-id", default="python-" + uuid.uuid4().hex[:8])
    parser.add_argument("--groups", type=int, default=2, help="groups (each shares one seed)")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per group")
    parser.add_argument("--policy-version", type=int, default=0)
    parser.add_argument("--partitioner", default="murmur2_random",
                        help="librdkafka partitioner (default murmur2_random: the partition the Java client and "
                             "kafkajs pick for the group id, where the processors assemble the group)")
    parser.add_argument("--no-group-size", action="store_true", help="do not announce info.groupSize on the steps")
    parser.add_argument("--no-read-back", action="store_true", help="only publish; do not wait for trajectories, samples, rows")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each part of the read-back")
    args = parser.parse_args(argv)
    args.topic = args.topic or args.prefix + ".env.steps"
    started_ms = int(time.time() * 1000) - 1000

    writer = SingleObjectWriter(args.schema)
    # Idempotent producer with acks=all, as trajflow's own producer: a retry never duplicates a step.
    # partitioner murmur2_random: a key goes where the Java client and kafkajs put it (librdkafka's default,
    # consistent_random, hashes with CRC32 and picks another partition for most keys; the processors then move
    # those steps to the murmur2 partition first, one transaction later).
    producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                         "partitioner": args.partitioner})
    failures = []

    def delivered(error, message):
        if error is not None:
            failures.append(f"{message.key()!r}: {error}")

    env = LineWalk()
    summary = []
    for group in range(args.groups):
        group_id = f"{args.run_id}-g{group}"
        seed = 100 + group
        for episode in range(args.episodes):
            episode_id = f"{group_id}-e{episode}"
            group_size = None if args.no_group_size else args.episodes
            events = play_episode(env, args.run_id, group_id, episode_id, seed, episode, args.policy_version, group_size)
            for event in events:
                # Keyed by group id: a whole group lands on one partition, in order.
                producer.produce(args.topic, key=group_id.encode("utf-8"), value=writer.encode(event), on_delivery=delivered)
                producer.poll(0)
            last = events[-1]
            summary.append({
                "groupId": group_id, "episodeId": episode_id, "steps": len(events),
                "totalReward": sum(e["reward"] for e in events), "terminated": last["terminated"],
                "truncated": last["truncated"], "invalidActions": sum(1 for e in events if not e["actionValid"]),
            })
    remaining = producer.flush(30)
    if remaining > 0 or failures:
        print(f"not delivered: {remaining} still queued, failures: {failures}", file=sys.stderr)
        return 1
    # One JSON line per episode on stdout, so a caller (the integration test) knows what to expect.
    for line in summary:
        print(json.dumps(dict(line, kind="published")))
    print(f"published {sum(s['steps'] for s in summary)} step events of {len(summary)} episodes to {args.topic} "
          f"(schema fingerprint {writer.fingerprint:016x})", file=sys.stderr, flush=True)
    if args.no_read_back:
        return 0
    return read_back(args, len(summary), started_ms)


def read_back(args, episodes, started_ms) -> int:
    """What trajflow made of the steps: one trajectory and one sample per episode, and their ClickHouse rows."""
    topics = {"trajectories": args.prefix + ".trajectories", "samples": args.prefix + ".samples"}
    found = read_run_events(args.bootstrap, list(topics.values()), args.run_id,
                            {topic: episodes for topic in topics.values()}, started_ms, args.timeout)
    for t in found[topics["trajectories"]]:
        print(json.dumps({"kind": "trajectory", "episodeId": t["episodeId"], "groupId": t["groupId"], "outcome": t["outcome"],
                          "stepCount": t["stepCount"], "totalReward": t["totalReward"], "success": t["success"]}))
    for s in found[topics["samples"]]:
        print(json.dumps({"kind": "sample", "episodeId": s["episodeId"], "groupId": s["groupId"], "groupSize": s["groupSize"],
                          "reward": s["reward"], "estimator": s["estimator"], "tokens": len(s["tokenIds"]),
                          "lossTokens": sum(s["lossMask"]), "advantage": next((a for a, m in zip(s["advantages"], s["lossMask"]) if m), 0.0)}))
    rows = {
        "trajectories": clickhouse_rows("SELECT episode_id, group_id, outcome, step_count, total_reward, success "
                                        "FROM trajectories FINAL WHERE run_id = {run} ORDER BY episode_id", args.run_id, episodes, args.timeout),
        "samples": clickhouse_rows("SELECT episode_id, group_id, group_size, reward, estimator, token_count, loss_token_count "
                                   "FROM samples FINAL WHERE run_id = {run} ORDER BY episode_id", args.run_id, episodes, args.timeout),
    }
    for table, table_rows in rows.items():
        for row in table_rows:
            print(json.dumps({"kind": "row", "table": table, **row}))
    counts = [len(found[topics["trajectories"]]), len(found[topics["samples"]]), len(rows["trajectories"]), len(rows["samples"])]
    print(f"read back {counts[0]} trajectories and {counts[1]} samples from Kafka, {counts[2]} trajectory and {counts[3]} "
          f"sample rows from ClickHouse ({episodes} episodes published)", file=sys.stderr)
    return 0 if all(count == episodes for count in counts) else 2


if __name__ == "__main__":
    sys.exit(main())
